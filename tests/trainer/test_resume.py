"""A run that stops after a finished round and resumes from that round's checkpoint goes on exactly as the run that
never stopped: the same answers, the same update, the same validation, the same kept adapter."""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import replace

import pytest
import torch
from safetensors.torch import load_file

from trainer.checkpoint_files import checkpoint_key
from trainer.loop import run
from trainer.spec import ResumeFrom

pytestmark = pytest.mark.slow

ROUNDS, PROMPTS_PER_ROUND = 3, 8


class WorkerDied(BaseException):
    """What a killed worker looks like to the run: nothing after this point happens (not an Exception, which the
    run would record as a failure)."""


def _records_until_round(stop_after: int):
    records: list = []

    def emit(record) -> None:
        records.append(record)
        if record.type == "round_scored" and record.round == stop_after:
            raise WorkerDied

    return records, emit


@pytest.fixture(scope="module")
def uninterrupted(run_spec, tmp_path_factory):
    storage = tmp_path_factory.mktemp("uninterrupted")
    records: list = []
    assert run(run_spec(storage, rounds=ROUNDS, prompts_per_round=PROMPTS_PER_ROUND), emit=records.append)
    return storage, records


@pytest.fixture(scope="module")
def stopped_after_round_2(run_spec, tmp_path_factory):
    storage = tmp_path_factory.mktemp("stopped")
    spec = run_spec(storage, rounds=ROUNDS, prompts_per_round=PROMPTS_PER_ROUND)
    records, emit = _records_until_round(2)
    with pytest.raises(WorkerDied):
        run(spec, emit=emit)
    return spec, storage, records


def _learned(record) -> list:
    """All a round's record says of what it sampled and learned (its seconds and memory are the machine's)."""
    return [record.round, record.reward, record.signal, record.cut_off, record.loss, record.validation_reward,
            record.best_round, record.mean_answer_tokens, record.token_entropy]


def _close(value):
    return value if value is None else pytest.approx(value, rel=1e-5, abs=1e-6)


def test_a_resumed_run_goes_on_exactly_as_the_uninterrupted_one(uninterrupted, stopped_after_round_2, tmp_path):
    _, whole = uninterrupted
    spec, stopped_storage, before = stopped_after_round_2
    storage = tmp_path / "resumed"  # a copy: the other tests read the stopped run's checkpoints as it left them
    shutil.copytree(stopped_storage, storage)
    spec = replace(spec, storage=replace(spec.storage, location=str(storage)))
    last = [r for r in before if r.type == "round_scored"][-1]
    records: list = []

    assert run(replace(spec, resume=ResumeFrom(round=2, sha256=last.checkpoint_sha256)), emit=records.append)

    assert [r.type for r in records] == ["prepared", "round_scored", "adapter_saved", "completed"]
    rounds = [r for r in before + records if r.type == "round_scored"]
    # the same answers and numbers; a float may differ in its last digits, as two uninterrupted runs' do on a CPU
    expected = [_learned(r) for r in whole if r.type == "round_scored"]
    assert [_learned(r) for r in rounds] == [[_close(v) for v in r] for r in expected]
    saved, whole_saved = records[-2], next(r for r in whole if r.type == "adapter_saved")
    assert (saved.size_bytes, saved.best_round) == (whole_saved.size_bytes, whole_saved.best_round)
    kept = load_file(storage / "runs" / spec.run_id / "adapter" / "adapter_model.safetensors")
    kept_whole = load_file(uninterrupted[0] / "runs" / spec.run_id / "adapter" / "adapter_model.safetensors")
    assert kept.keys() == kept_whole.keys()
    # two uninterrupted runs' weights differ by up to about 1e-6 here (weights of 1e-3 to 1e-1)
    assert all(torch.allclose(kept[name], kept_whole[name], rtol=0, atol=1e-5) for name in kept)
    completed, whole_completed = records[-1], next(r for r in whole if r.type == "completed")
    assert (completed.rounds_done, completed.best_round, completed.note) == (
        whole_completed.rounds_done, whole_completed.best_round, whole_completed.note
    )
    assert completed.best_validation_reward == pytest.approx(whole_completed.best_validation_reward, abs=1e-6)
    round_3 = "runs/{}/rollouts/round-003.jsonl"
    assert (storage / round_3.format(spec.run_id)).read_text() == (
        uninterrupted[0] / round_3.format(spec.run_id)
    ).read_text()


def test_only_the_last_two_rounds_checkpoints_are_kept_and_each_record_names_its_own(stopped_after_round_2):
    spec, storage, records = stopped_after_round_2
    folder = storage / "runs" / spec.run_id / "checkpoints"
    assert sorted(p.name for p in folder.iterdir()) == ["round-001.pt", "round-002.pt"]

    last = [r for r in records if r.type == "round_scored"][-1]
    assert hashlib.sha256((storage / checkpoint_key(spec.run_id, 2)).read_bytes()).hexdigest() == last.checkpoint_sha256
    assert last.checkpoint_seconds is not None and last.checkpoint_seconds < last.seconds.total
    assert next(r for r in records if r.type == "round_scored").checkpoint_sha256 is None  # round 0 trains nothing


def test_a_run_that_did_all_its_rounds_leaves_no_checkpoint(uninterrupted, run_spec):
    storage, records = uninterrupted
    assert [r.type for r in records][-2:] == ["adapter_saved", "completed"]
    assert list((storage / "runs" / run_spec(storage).run_id / "checkpoints").iterdir()) == []


def test_a_checkpoint_that_fails_its_checksum_is_never_used(stopped_after_round_2):
    spec, _, _ = stopped_after_round_2
    records: list = []

    assert not run(replace(spec, resume=ResumeFrom(round=2, sha256="0" * 64)), emit=records.append)

    assert [r.type for r in records] == ["prepared", "failed"]
    assert records[-1].message == "The checkpoint of round 2 does not match its checksum; it was not used."


def test_a_missing_checkpoint_is_said_in_words(uninterrupted, run_spec):
    storage, _ = uninterrupted  # round 1's checkpoint was deleted when round 3's was written
    spec = run_spec(storage, rounds=ROUNDS, prompts_per_round=PROMPTS_PER_ROUND)
    records: list = []

    assert not run(replace(spec, resume=ResumeFrom(round=1, sha256="0" * 64)), emit=records.append)

    assert records[-1].message == "The checkpoint of round 1 is missing; the run cannot resume."
