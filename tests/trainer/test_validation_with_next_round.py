"""A round's validation and the next round's sampling are one decode (trainer/round.py validate_and_sample_next,
trainer/sampling.py sample_with_greedy): the same answers as the two apart, and every round but the first samples
its answers with the round before it."""

from __future__ import annotations

import torch

from trainer.backends import make_backend
from trainer.loop import run
from trainer.sampling import TransformersBackend

SMALL = {"rounds": 3, "prompts_per_round": 8, "answers_per_prompt": 8, "validation_sample_size": 8}


def tokens(groups) -> list[list[list[int]]]:
    return [[answer.token_ids for answer in group] for group in groups]


def test_sampling_with_the_greedy_answers_gives_each_as_sampled_apart(adapted):
    tokenizer, model, prompts, end_ids = adapted
    model.train()
    train, validation = prompts[:16], prompts[16:32]

    def backend(seed: int) -> TransformersBackend:
        return TransformersBackend(model, tokenizer.pad_token_id, end_ids, torch.device("cpu"), seed=seed)

    apart = backend(7)
    sampled_apart = tokens(apart.sample(train, 8, 12, False, lambda: False))
    greedy_apart = tokens(apart.sample(validation, 1, 12, True, lambda: False))
    together = backend(7)
    sampled, greedy = together.sample_with_greedy(train, 8, validation, 12, lambda: False)

    assert tokens(greedy) == greedy_apart
    pairs = zip(tokens(sampled), sampled_apart, strict=True)
    same = sum(a == b for ga, gb in pairs for a, b in zip(ga, gb, strict=True))
    # the same draws from the same generator; a draw may differ only where float rounding moves a boundary
    assert same >= 0.98 * 16 * 8
    assert torch.equal(together.random_state(), apart.random_state())  # the greedy answers drew nothing
    assert model.training


def test_each_round_after_the_first_samples_its_answers_with_the_validation_before_it(run_spec, tmp_path, records):
    calls: list[str] = []

    def counting(spec, policy):
        backend = make_backend(spec, policy)
        sample, together = backend.sample, backend.sample_with_greedy

        def sample_alone(prompts, answers_per_prompt, max_answer_tokens, greedy, should_stop):
            calls.append("validation alone" if greedy else "round alone")
            return sample(prompts, answers_per_prompt, max_answer_tokens, greedy, should_stop)

        def sample_together(*args):
            calls.append("validation with the next round")
            return together(*args)

        backend.sample, backend.sample_with_greedy = sample_alone, sample_together
        return backend

    assert run(run_spec(tmp_path, **SMALL), emit=records, backend_factory=counting)
    # round 0's validation samples round 1, round 1's round 2, round 2's round 3; round 3's validation is alone
    assert calls == ["validation with the next round"] * 3 + ["validation alone"]
    scored = records.of("round_scored")
    assert [r.round for r in scored] == [0, 1, 2, 3]
    assert all(r.validation_reward is not None for r in scored)
    assert all(r.seconds.sampling > 0 and r.seconds.validation > 0 for r in scored[1:])
