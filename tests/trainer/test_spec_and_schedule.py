"""The run spec and progress records round-trip through JSON; prompts are taken as 000 says."""

from __future__ import annotations

import json

import pytest
from trainer_specs import rl_settings

from trainer.progress import PhaseSeconds, RoundScored, record_from_dict, record_to_dict
from trainer.schedule import PromptSchedule, validation_sample
from trainer.spec import RunSpec, SpecError

MINIMAL = {
    "run_id": "r1",
    "model": {"path_or_id": "data/models/tiny-math"},
    "storage": "data/storage",
    "reward": {"config": {"preset": "verifiable", "metric": "math_pairs"}},
    "train_rows": [{"prompt": [{"role": "user", "content": "What is 2+3?"}], "reference": "5"}],
    "validation_rows": [{"prompt": [{"role": "user", "content": "What is 4*5?"}], "reference": "20"}],
    "deadline": "2030-01-01T00:00:00+00:00",
    **rl_settings(),  # a full run with the product's settings, as the jobs write it
}


def test_a_minimal_spec_takes_the_products_defaults_and_round_trips():
    spec = RunSpec.from_dict(MINIMAL)
    assert (spec.rounds, spec.prompts_per_round, spec.answers_per_prompt, spec.max_answer_tokens) == (20, 64, 8, 512)
    assert (spec.learning_rate, spec.training_window, spec.micro_batch_size) == (5e-6, 2048, 8)
    assert (spec.lora_rank, spec.lora_alpha, spec.loss_type, spec.quantization) == (16, 32, "grpo", "none")
    assert spec.deadline == 1893456000.0 and spec.storage.location == "data/storage"
    assert RunSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec


@pytest.mark.parametrize(
    ("change", "words"),
    [({"loss_type": "ppo"}, "loss_type"), ({"answers_per_prompt": 1}, "answers_per_prompt"),
     ({"surprise": 1}, "unknown spec field"), ({"deadline": "2030-01-01T00:00:00"}, "time zone")],
)
def test_a_malformed_spec_is_refused_naming_the_field(change, words):
    with pytest.raises(SpecError, match=words):
        RunSpec.from_dict({**MINIMAL, **change})


def test_a_round_record_round_trips_and_writes_the_products_log_line():
    record = RoundScored(3, 20, 0.41, 0.62, 0.02, 0, 128, [], True, 0.012, 0.47, 3,
                         PhaseSeconds(81.2, 2.1, 64.0, 9.5), 4.0, 1.2, 10)
    assert record_from_dict(json.loads(json.dumps(record_to_dict(record)))) == record
    assert record.log_line() == (
        "Round 3 of 20: reward 0.4100, signal 62%, cut off 2%, 0 metric failures, updated, loss 0.0120, "
        "validation reward 0.4700 (best round 3); seconds: sampling 81.2, grading 2.1, update 64.0, validation 9.5."
    )


def test_each_round_takes_the_next_prompts_none_twice_and_reshuffles_when_they_run_out():
    schedule = PromptSchedule(count=10, per_round=4, seed=1)
    rounds = [schedule.next_round() for _ in range(10)]
    assert all(len(set(r)) == 4 for r in rounds)  # none twice in a round
    first_pass = rounds[0] + rounds[1] + rounds[2][:2]
    assert sorted(first_pass) == list(range(10))  # every prompt once before any repeats
    second_pass = rounds[2][2:] + rounds[3] + rounds[4]
    assert sorted(second_pass) == list(range(10)) and second_pass != first_pass  # a new order
    assert [PromptSchedule(10, 4, seed=1).next_round() for _ in range(1)] == rounds[:1]  # seeded


def test_the_validation_sample_is_fixed_and_at_most_128():
    sample = validation_sample(count=500, size=128, seed=3)
    assert len(sample) == 128 == len(set(sample)) and sample == validation_sample(500, 128, seed=3)
    assert validation_sample(count=20, size=128, seed=3) == list(range(20))
