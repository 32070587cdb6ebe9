"""Runs, loops and experiments saved before a run's settings were typed replay with typed settings.

fixtures/events_before_typed_settings.json holds every stored event of a story written by the code of that day
(version 1 events: the settings a plain API body): it saves, edits, launches, trains, retries, duplicates, cancels
and deletes RL runs (every setting named, a reward from a baseline, a trial on a dataset version, a custom reward,
one that starts from another), SFT, DPO and Head runs (full and trial, RL from SFT, Head from Head), a training
loop and an experiment, which hold run settings too. Beside the events, the settings each aggregate held then (the
API body) and every read-model row that code built from them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from eventsourcing.persistence import StoredEvent

from domain.actors import Actor
from domain.application import Verity
from domain.runs.run_settings import RunSettings
from domain.runs.settings import run_body_from_api
from projections.runner import ProjectionRunner
from projections.store import TABLE_KEYS, memory_read_models

FIXTURE = Path(__file__).parent / "fixtures" / "events_before_typed_settings.json"
OWNER = Actor("person", "owner@localhost", "owner@localhost")
RUNS = ("rl", "from_baseline", "trial", "retry", "copy", "continued", "custom_run", "cancelled", "sft", "rl_from_sft",
        "dpo", "head", "head_trial", "head_again", "sft_edited")


@pytest.fixture(scope="module")
def stored() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text())


# The settings added after the fixture was written, and what a run saved before them goes on with: one pass a round,
# TRL's clip range, and no gradient clipping (it trained without; a new run's default is 1.0).
ADDED_SINCE = {"rl": {"epochs": 1}, "advanced": {"clip_low": 0.2, "clip_high": 0.2, "max_grad_norm": None}}


def as_saved_then(value: Any) -> Any:
    """`value` with every settings body in it (a run's, a loop's, an event's) without the settings added since,
    once each is found to hold what a run saved then goes on with."""
    if isinstance(value, list):
        return [as_saved_then(item) for item in value]
    if not isinstance(value, dict):
        return value
    training = value.get("training")
    if isinstance(training, dict) and isinstance(training.get("rl"), dict):
        training = {**training}
        for block, added in ADDED_SINCE.items():
            held = {**training[block]}
            for key, then in added.items():
                assert held.pop(key) == then, key
            training[block] = held
        value = {**value, "training": training}
    return {key: as_saved_then(item) for key, item in value.items()}


def replayed(stored: dict[str, Any]) -> Verity:
    """A new application over the stored events, as a deployment upgraded over its event store."""
    verity = Verity(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    verity.recorder.insert_events([
        StoredEvent(UUID(e["originator_id"]), e["originator_version"], e["topic"], json.dumps(e["state"]).encode())
        for e in stored["events"]
    ])
    return verity


def ids(stored: dict[str, Any]) -> dict[str, UUID]:
    return {name: UUID(value) for name, value in stored["ids"].items()}


def test_the_events_were_written_before_the_settings_were_typed(stored):
    saved = [e["state"] for e in stored["events"] if e["topic"].endswith(("Run.Saved", "Run.Edited"))]
    assert len(saved) == 19 and all("class_version" not in state for state in saved)
    assert all(isinstance(state["settings"]["training"]["rl"], dict) for state in saved)  # the body, unmarked


def test_every_run_loop_and_experiment_reads_the_settings_it_saved_typed(stored):
    verity, named = replayed(stored), ids(stored)
    org = named["org"]
    for name in RUNS:
        settings = verity.get_run(org, named[name]).settings
        assert isinstance(settings, RunSettings)
        assert as_saved_then(settings.to_api()) == stored["settings"][name], name
    loop = verity.get_loop(org, named["loop"]).run_settings
    experiment = verity.get_experiment(org, named["experiment"]).run_settings
    assert as_saved_then(loop.to_api()) == stored["settings"]["loop"]
    assert as_saved_then(experiment.to_api()) == stored["settings"]["experiment"]

    edited = verity.get_run(org, named["rl"])
    assert (edited.settings.rounds, edited.settings.answers_per_prompt, edited.settings.lora_rank) == (3, 4, 8)
    assert (edited.settings.name, edited.settings.model_revision, edited.total_rounds) == (
        "math pairs, 3 rounds", "abc123", 3)
    trial = verity.get_run(org, named["trial"]).settings
    assert (trial.is_trial, trial.effective_rounds, trial.effective_prompts_per_round) == (True, 1, 8)
    assert trial.reward["metric"] == "token_f1" and trial.dataset_version == str(named["messages_version"])
    assert verity.get_run(org, named["retry"]).settings == trial
    assert verity.get_run(org, named["from_baseline"]).settings.baseline == str(named["baseline"])
    assert verity.get_run(org, named["continued"]).settings.start_run == str(named["rl"])
    sft = verity.get_run(org, named["sft"]).settings
    assert (sft.objective, sft.epochs, sft.batch_size, sft.learning_rate) == ("sft", 2, 16, 0.0002)
    assert verity.get_run(org, named["dpo"]).settings.beta == 0.2
    assert verity.get_run(org, named["head_again"]).settings.start_run == str(named["head"])
    assert (loop.rounds, loop.prompts_per_round, experiment.answers_per_prompt) == (2, 8, 4)


def test_the_read_models_built_from_them_are_the_rows_of_that_day(stored):
    read_models = memory_read_models()
    ProjectionRunner(replayed(stored), read_models).run_once()
    now = read_models.dump()
    for table, rows in stored["read_models"].items():
        if table not in TABLE_KEYS:
            continue
        if table == "projection_positions":  # a projection made since, or gone since (samples), has its own row
            names = {row["name"] for row in now[table]}
            now[table] = [row for row in now[table] if row["name"] in {before["name"] for before in rows}]
            rows = [row for row in rows if row["name"] in names]
        assert len(now[table]) == len(rows), table
        for before, after in zip(rows, now[table], strict=True):
            if table == "rounds":  # its log line is no longer stored: it is written the same when the round is read
                before = dict(before)
                assert _log_line(read_models, before) == before.pop("log_line")
            assert {key: as_saved_then(_read(key, after[key])) for key in before} == {
                key: _read(key, value) for key, value in before.items()
            }, table


def _log_line(read_models, row: dict[str, Any]) -> str:
    rounds = read_models.rounds(UUID(row["org_id"]), UUID(row["run_id"]))
    return next(r.log_line for r in rounds if r.round_number == row["round_number"])


def test_the_rollout_files_read_from_the_rounds_are_the_index_of_that_day(stored):
    """The index of rollout files had a table of its own; the rounds' rows give the same files."""
    read_models = memory_read_models()
    ProjectionRunner(replayed(stored), read_models).run_once()
    then = stored["read_models"]["rollout_files"]
    assert then
    for run_id in {row["run_id"] for row in then}:
        org_id = UUID(next(row["org_id"] for row in then if row["run_id"] == run_id))
        files = read_models.samples(org_id, UUID(run_id))
        expected = sorted((r for r in then if r["run_id"] == run_id), key=lambda r: -r["round_number"])
        assert [(str(f.run_id), f.round_number, f.path, f.written_at) for f in files] == [
            (r["run_id"], r["round_number"], r["path"], r["written_at"]) for r in expected
        ]


def _read(column: str, value: Any) -> Any:
    """A JSON column as what it holds (a body's keys may come in another order), any other as it is."""
    return json.loads(value) if column.endswith("_json") and isinstance(value, str) else value


def test_old_runs_carry_on_and_new_events_store_the_same_body(stored):
    verity, named = replayed(stored), ids(stored)
    org = named["org"]
    copy = verity.duplicate_run(org, named["rl"], OWNER).id  # as the fixture's copy was made
    [state] = [json.loads(e.state) for e in verity.recorder.select_events(copy)]
    assert state["class_version"] == 2
    assert state["settings"]["_type_"] == "run_settings"
    assert as_saved_then(state["settings"]["_data_"]) == stored["settings"]["copy"]

    body = {"name": "sft draft", "dataset_version": str(named["messages_version"]),
            "training": {"objective": "sft", "sft": {"epochs": 5, "batch_size": 4}}}
    verity.edit_run(org, named["sft_edited"], run_body_from_api(body), OWNER)  # a draft saved then, edited now
    edited = json.loads(verity.recorder.select_events(named["sft_edited"])[-1].state)
    assert edited["changes"] == ["Batch size"]  # what changed, against the settings it saved then
    assert edited["settings"]["_data_"]["training"]["sft"] == {"epochs": 5, "batch_size": 4}
    verity.launch_run(org, named["copy"], OWNER, "member")
    assert verity.get_run(org, named["copy"]).status == "Queued"
