"""The RL settings of a run: every bound refused with its label and range, in the API body and the form."""

from __future__ import annotations

import pytest

from domain.errors import SettingsInvalid
from domain.runs.launch_words import trial_confirmation
from domain.runs.run_settings import FIELDS, FIELDS_BY_NAME, RunSettings
from domain.runs.settings import run_body_from_api, run_body_from_form

RL = {"rounds", "prompts_per_round", "answers_per_prompt", "max_answer_tokens", "start_run", "reward"}
TRAINING = {"time_limit_hours", "price_limit_per_hour", "trial_minutes", "model_revision"}

BOUNDS_MESSAGES = {
    "rounds": "Rounds must be a whole number from 1 to 1,000.",
    "prompts_per_round": "Prompts per round must be a whole number from 1 to 1,024.",
    "answers_per_prompt": "Answers per prompt must be a whole number from 2 to 64.",
    "max_answer_tokens": "Longest sampled answer (tokens) must be a whole number from 16 to 16,384.",
    "learning_rate": "Learning rate must be a number from 1e-7 to 1e-3.",
    "training_window": "Training window (tokens) must be a whole number from 128 to 131,072.",
    "micro_batch_size": "Micro batch size must be a whole number from 1 to 64.",
    "lora_rank": "Adapter size (LoRA rank) must be a whole number from 4 to 128.",
    "lora_alpha": "Adapter scaling (LoRA alpha) must be a whole number from 4 to 256.",
    "vllm_gpu_memory": "GPU memory for vLLM must be a number from 0.1 to 0.95.",
    "time_limit_hours": "Time limit (hours) must be a number from 0.1 to 168.",
    "trial_minutes": "Minutes must be a whole number from 5 to 60.",
    "seed": "Seed must be a whole number from 0 to 2,147,483,647.",
}
OUTSIDE = {  # a value just below and just above each range
    "rounds": (0, 1001),
    "prompts_per_round": (0, 1025),
    "answers_per_prompt": (1, 65),
    "max_answer_tokens": (15, 16385),
    "learning_rate": (9e-8, 0.0011),
    "training_window": (127, 131073),
    "micro_batch_size": (0, 65),
    "lora_rank": (3, 129),
    "lora_alpha": (3, 257),
    "vllm_gpu_memory": (0.09, 0.96),
    "time_limit_hours": (0.09, 168.5),
    "trial_minutes": (4, 61),
    "seed": (-1, 2_147_483_648),
}


def api_body(name: str, value: object) -> dict:
    training: dict = {"rl": {}, "advanced": {}}
    if name in RL:
        training["rl"][name] = value
    elif name in TRAINING:
        training[name] = value
    else:
        training["advanced"][name] = value
    if name == "training_window":  # keep the window larger than the longest answer, to see its own bound
        training["rl"]["max_answer_tokens"] = 16
    if name == "max_answer_tokens":
        training["advanced"]["training_window"] = 131072
    return {"training": training}


def refusal(body: dict) -> dict[str, str]:
    with pytest.raises(SettingsInvalid) as refused:
        run_body_from_api(body)
    return refused.value.errors


def test_defaults_fill_every_field_of_the_api_body():
    body = RunSettings().to_api()
    assert body["training"]["objective"] == "rl" and body["training"]["method"] == "lora"
    assert body["training"]["rl"] == {
        "rounds": 20,
        "prompts_per_round": 64,
        "answers_per_prompt": 8,
        "max_answer_tokens": 512,
        "start_run": None,
        "reward": None,
        "epochs": 1,
    }
    assert body["training"]["advanced"]["learning_rate"] == 0.000005
    assert run_body_from_api({}) == RunSettings()
    assert RunSettings.from_saved(body) == RunSettings()
    assert {spec.name for spec in FIELDS} == RL | TRAINING | {
        "learning_rate",
        "training_window",
        "micro_batch_size",
        "lora_rank",
        "lora_alpha",
        "loss_type",
        "generation_backend",
        "vllm_gpu_memory",
        "quantization",
        "seed",
        "rl_epochs",
        "clip_low",
        "clip_high",
        "max_grad_norm",
    }


@pytest.mark.parametrize("name", sorted(BOUNDS_MESSAGES))
def test_every_number_out_of_its_range_is_refused_with_its_label_and_range(name):
    below, above = OUTSIDE[name]
    spec = FIELDS_BY_NAME[name]
    assert spec.bounds_message() == BOUNDS_MESSAGES[name]
    for value in (below, above, "many"):
        assert refusal(api_body(name, value)) == {name: BOUNDS_MESSAGES[name]}
    for value in (spec.minimum, spec.maximum):
        assert getattr(run_body_from_api(api_body(name, value)), name) == value


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("loss_type", "Loss type must be one of: grpo, dapo, dr_grpo."),
        ("generation_backend", "Generation backend must be one of: auto, vllm, transformers."),
        ("quantization", "Quantization must be one of: none, 8bit, 4bit."),
    ],
)
def test_a_choice_outside_its_list_is_refused(name, message):
    assert refusal(api_body(name, "fastest")) == {name: message}


def test_a_price_limit_must_be_above_zero_or_empty():
    message = "Price limit ($/hour) must be a number above 0, or empty for no limit."
    assert refusal(api_body("price_limit_per_hour", 0)) == {"price_limit_per_hour": message}
    assert run_body_from_api(api_body("price_limit_per_hour", 2.5)).price_limit_per_hour == 2.5
    assert run_body_from_api(api_body("price_limit_per_hour", None)).price_limit_per_hour is None


def test_the_longest_answer_must_fit_in_the_training_window():
    errors = refusal({"training": {"rl": {"max_answer_tokens": 4096}, "advanced": {"training_window": 4096}}})
    assert errors == {
        "training_window": "Training window (tokens) must be larger than Longest sampled answer "
        "(tokens): each prompt and the longest sampled answer must fit in it."
    }


def test_rl_locks_the_method_and_one_gpu_and_every_bad_field_is_reported_at_once():
    errors = refusal({"training": {"objective": "ppo", "method": "full", "gpu_count": 2, "rl": {"rounds": 0}}})
    assert errors == {
        "objective": (
            'Training objective must be one of: rl, sft, dpo, head (training.objective "rl", "sft", "dpo" or '
            '"head").'
        ),
        "method": 'RL trains a LoRA adapter: training.method must be "lora".',
        "gpu_count": "RL trains on one GPU: training.gpu_count must be 1.",
        "rounds": "Rounds must be a whole number from 1 to 1,000.",
    }
    assert refusal({"kind": "sample"}) == {"kind": "Run must be Full training or Training trial · a small sample."}


def test_the_form_reads_numbers_with_thousands_separators_and_the_reward_fields():
    draft = run_body_from_form(
        {
            "name": "labels",
            "kind": "trial",
            "rounds": "1,000",
            "learning_rate": "0.00001",
            "price_limit_per_hour": "",
            "reward_preset": "classification",
            "reward_metric": "accuracy",
            "reward_labels": "yes\nno",
        }
    )
    assert (draft.rounds, draft.learning_rate, draft.price_limit_per_hour) == (1000, 0.00001, None)
    assert draft.reward == {"preset": "classification", "metric": "accuracy", "labels": ["yes", "no"]}
    assert run_body_from_form({"reward_preset": ""}).reward is None
    with pytest.raises(SettingsInvalid) as refused:
        run_body_from_form({"rounds": "0", "answers_per_prompt": "1"})
    assert set(refused.value.errors) == {"rounds", "answers_per_prompt"}


def test_a_trial_runs_one_round_on_at_most_eight_prompts_within_its_minutes():
    trial = run_body_from_api({"kind": "trial", "training": {"trial_minutes": 30}})
    assert (trial.effective_rounds, trial.effective_prompts_per_round) == (1, 8)
    assert trial_confirmation(trial) == (
        "A trial: one round on up to 8 prompts and 30 minutes, then the GPU is released."
    )
    short = trial.with_values(time_limit_hours=0.25)
    assert (
        trial_confirmation(short) == "A trial: one round on up to 8 prompts and 15 minutes, then the GPU is released."
    )
