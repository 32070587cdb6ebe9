"""Epochs in the trainer (issue 25, in progress: the settings and the run page come next): a round makes `epochs`
passes over its answers, each one optimizer step, the passes after the first with the clipped ratio against the
first pass's log-probabilities; the round reports the share of tokens the clip held back and the gradient's norm
before clipping, which `max_grad_norm` clips."""

from __future__ import annotations

from dataclasses import replace

import pytest

from trainer.loop import run
from trainer.spec import SpecError

pytestmark = pytest.mark.slow


def _rounds(spec) -> list:
    records: list = []
    assert run(spec, emit=records.append)
    return [r for r in records if r.type == "round_scored" and r.round > 0]


def test_a_second_pass_learns_more_from_the_same_answers_and_the_clip_reports_what_it_held(run_spec, tmp_path):
    one = run_spec(tmp_path / "one", rounds=2, prompts_per_round=8)
    once = _rounds(one)
    twice = _rounds(replace(one, storage=replace(one.storage, location=str(tmp_path / "two")), epochs=2))
    clipped_norm = _rounds(replace(one, storage=replace(one.storage, location=str(tmp_path / "three")),
                                   max_grad_norm=1e-4))

    # round 1 samples before its update: the same answers, and the first pass's loss and norm are the same
    assert (twice[0].reward, twice[0].loss) == (once[0].reward, pytest.approx(once[0].loss, abs=1e-6))
    assert once[0].clipped is None and 0.0 <= twice[0].clipped <= 1.0
    assert once[0].grad_norm > 0 and twice[0].grad_norm > 0
    assert clipped_norm[0].grad_norm == pytest.approx(once[0].grad_norm, rel=1e-5)  # the norm before clipping
    # after round 1's update the adapters differ (a second step, or a step clipped to a tiny norm), and so do the
    # gradients of round 2 (its loss is no witness: with a ratio of 1 it is -Σ A·w, about 0 in every run)
    assert twice[1].grad_norm != pytest.approx(once[1].grad_norm, rel=1e-4)
    assert clipped_norm[1].grad_norm != pytest.approx(once[1].grad_norm, rel=1e-4)


def test_epochs_are_one_to_four(run_spec, tmp_path):
    with pytest.raises(SpecError, match="epochs must be from 1 to 4"):
        replace(run_spec(tmp_path), epochs=5)
