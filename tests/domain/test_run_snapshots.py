"""A long run loads from the event store's snapshots: the same run as its events make, on SQLite and PostgreSQL,
on a store made before there were snapshots too, and without a snapshot ever reaching the projections' log."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar, cast
from uuid import UUID

import psycopg
import pytest
from eventsourcing.domain import MutableOrImmutableAggregate, Snapshot
from rounds import TINY_MODEL_ROUND, scored_round

from domain.actors import Actor
from domain.application import RUN_SNAPSHOT_INTERVAL, Verity
from domain.runs.run import Run
from domain.runs.settings import run_body_from_api
from verity.config import PostgresSettings, Settings
from verity.wiring import event_store_env

OWNER = Actor("person", "owner@localhost", "owner@localhost")
ROUNDS = 2 * RUN_SNAPSHOT_INTERVAL + 5  # two snapshots, and events after the last one


class WithoutSnapshots(Verity):
    """The application as it was before snapshots: it neither takes nor reads them (nor makes their table)."""

    name = "Verity"
    snapshotting_intervals: ClassVar[dict[type[MutableOrImmutableAggregate[Any]], int]] = {}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, str]]:
    """An empty event store: a SQLite file, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        yield event_store_env(Settings(data_dir=tmp_path / "data"))
    else:
        postgres: PostgresSettings = request.getfixturevalue("postgres")
        yield event_store_env(Settings(data_dir=tmp_path / "data", postgres=postgres))


Opener = Callable[[type[Verity], dict[str, str]], Verity]


@pytest.fixture
def opened() -> Iterator[Opener]:
    """Opens applications and closes each after the test: left to the garbage collector, an application's
    PostgreSQL pool closes in whatever thread collects it, and logs while logging may be locked there."""
    applications: list[Verity] = []

    def open_application(kind: type[Verity], env: dict[str, str]) -> Verity:
        applications.append(kind(env=env))
        return applications[-1]

    yield open_application
    for application in applications:
        application.close()


def has_snapshots_table(env: dict[str, str]) -> bool:
    if env["PERSISTENCE_MODULE"] == "eventsourcing.sqlite":
        with sqlite3.connect(env["SQLITE_DBNAME"]) as db:
            return db.execute("SELECT 1 FROM sqlite_master WHERE name = 'stored_snapshots'").fetchone() is not None
    with psycopg.connect(host=env["POSTGRES_HOST"], port=env["POSTGRES_PORT"], dbname=env["POSTGRES_DBNAME"],
                         user=env["POSTGRES_USER"]) as db:
        row = db.execute("SELECT to_regclass('verity_snapshots') IS NOT NULL").fetchone()
        return bool(row and row[0])


def training_run(verity: Verity, total: int = ROUNDS + 10) -> UUID:
    org_id = verity.create_organization("Acme", "pro", OWNER).id
    project_id = verity.create_project(org_id, "Demo", "tiny-math", None, False, OWNER).id
    body = {"name": "math", "training": {"rl": {"rounds": total, "reward": {"preset": "verifiable",
                                                                             "metric": "math_pairs"}}}}
    run_id = verity.save_run(org_id, project_id, run_body_from_api(body), OWNER).id
    verity.launch_run(org_id, run_id, OWNER, "owner")
    verity.record_preparing(run_id)
    return run_id


def score(verity: Verity, run_id: UUID, numbers: range) -> None:
    """Rounds with no signal up to round 3 (each answer scored alike), then rounds that learned."""
    for number in numbers:
        signal = 0.0 if number < 4 else 0.5
        verity.record_round_scored(run_id, scored_round(
            number, 0.3 + 0.01 * (number % 7), TINY_MODEL_ROUND, reward=0.4, signal=signal, updated=signal > 0,
            uniform_value=0.4 if signal == 0 else None,
        ))


def long_run(verity: Verity, rounds: int = ROUNDS) -> UUID:
    """A run that found no signal in its first rounds, then learned, and was stopped by its time limit."""
    run_id = training_run(verity)
    score(verity, run_id, range(rounds))
    verity.record_stopped(run_id, "time_limit", "")
    return run_id


def latest_snapshot(verity: Verity, run_id: UUID) -> tuple[int, dict[str, Any]]:
    """The version of the run's latest snapshot, and the run's attributes as it loads them."""
    assert verity.snapshots is not None
    snapshot = cast(Snapshot, next(iter(verity.snapshots.get(run_id, desc=True, limit=1))))
    return snapshot.originator_version, dict(vars(snapshot.mutate(None)))


def test_a_long_run_loads_from_its_snapshot_as_its_events_make_it(store: dict[str, str], opened: Opener) -> None:
    verity = opened(Verity, store)
    run_id = long_run(verity)
    replaying = opened(WithoutSnapshots, store)
    run, replayed = verity.get_run(None, run_id), replaying.get_run(None, run_id)
    assert vars(run) == vars(replayed)
    stop = {"reason": "time_limit", "note": "", "after_round": ROUNDS - 1, "best_round": replayed.best_round}
    assert (run.rounds_scored, run.status, run.stop) == (ROUNDS, "Saving adapter", stop)
    version, state = latest_snapshot(verity, run_id)
    assert version == 2 * RUN_SNAPSHOT_INTERVAL < run.version  # it loaded from the snapshot and the events after it
    assert state == vars(replaying.repository.get(run_id, version=version))


def test_the_projections_log_holds_the_events_and_no_snapshot(store: dict[str, str], opened: Opener) -> None:
    verity = opened(Verity, store)
    run_id = long_run(verity)
    notifications = verity.notification_log.select(1, 1000)
    assert len(notifications) == verity.recorder.max_notification_id()
    run_events = [n.originator_version for n in notifications if n.originator_id == run_id]
    assert run_events == list(range(1, verity.get_run(None, run_id).version + 1))
    assert all(n.topic.startswith("domain.") and "Snapshot" not in n.topic for n in notifications)


def test_a_store_made_before_snapshots_gets_their_table_and_its_runs_go_on(store: dict[str, str],
                                                                         opened: Opener) -> None:
    before = opened(WithoutSnapshots, store)
    run_id = training_run(before)
    score(before, run_id, range(RUN_SNAPSHOT_INTERVAL - 5))
    assert not has_snapshots_table(store)

    verity = opened(Verity, store)  # the console started after the upgrade
    assert has_snapshots_table(store)
    score(verity, run_id, range(RUN_SNAPSHOT_INTERVAL - 5, ROUNDS))
    version, state = latest_snapshot(verity, run_id)
    assert version == 2 * RUN_SNAPSHOT_INTERVAL
    assert state == vars(before.repository.get(run_id, version=version))
    assert vars(verity.get_run(None, run_id)) == vars(before.get_run(None, run_id))


def test_a_snapshot_names_what_a_run_keeps() -> None:
    """A tripwire: a snapshot stores these attributes as they are. Changing them means raising Run.class_version
    with an upcast of older snapshots, or deleting them (domain/runs/run.py says how)."""
    verity = Verity(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    run_id = long_run(verity, rounds=RUN_SNAPSHOT_INTERVAL)
    _, state = latest_snapshot(verity, run_id)
    kept = sorted(key for key in state if not key.startswith("_"))
    assert (getattr(Run, "class_version", 1), kept) == (2, [
        "adapter", "alarm_watch", "alarms", "best_round", "best_validation", "duplicate_of", "failure",
        "first_trained_round", "latest_round", "learned", "merge", "model", "no_signal_scores", "org_id", "project_id",
        "resume_point", "resumes", "retried_as", "retry_of", "rounds_scored", "segments", "settings", "state",
        "steps", "stop", "trial_report",
    ])


def test_a_snapshot_from_before_alarms_loads_with_a_watch_from_its_latest_round() -> None:
    """A version 1 snapshot (before the alarms' watch): the upcast gives it its latest round's figures and no alarm
    standing, and the run goes on scoring rounds."""
    verity = Verity(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    run_id = long_run(verity, rounds=RUN_SNAPSHOT_INTERVAL)
    assert verity.snapshots is not None
    snapshot = cast(Snapshot, next(iter(verity.snapshots.get(run_id, desc=True, limit=1))))
    added = ("alarm_watch", "alarms", "class_version")
    before = {key: value for key, value in snapshot.state.items() if key not in added}
    old = Snapshot(originator_id=run_id, originator_version=snapshot.originator_version,  # type: ignore[call-arg]
                   timestamp=snapshot.timestamp, topic=snapshot.topic, state=before)
    run = cast(Run, old.mutate(None))
    latest = run.latest_round
    assert latest is not None and run.alarms == {}
    assert [r["round"] for r in run.alarm_watch["rounds"]] == [latest["round_number"]]
    assert run.alarm_watch["slowest_seconds"] == pytest.approx(5.0)  # the tiny model's round: 2 + 0.5 + 1.5 + 1


def test_a_snapshot_that_cannot_be_written_does_not_fail_the_saved_command(tmp_path: Path, caplog) -> None:
    """The database refuses the snapshot's write (a trigger, standing in for one that blinked after the events
    committed): each command still succeeds, its events are saved, and the run loads by replaying them."""
    env = event_store_env(Settings(data_dir=tmp_path / "data"))
    verity = Verity(env=env)
    run_id = training_run(verity)
    with sqlite3.connect(env["SQLITE_DBNAME"]) as db:
        db.execute("CREATE TRIGGER refused BEFORE INSERT ON stored_snapshots BEGIN SELECT RAISE(FAIL, 'blinked'); END")
    score(verity, run_id, range(RUN_SNAPSHOT_INTERVAL + 2))  # past a snapshot's version: no exception
    assert "A snapshot could not be written" in caplog.text
    assert verity.repository.get(run_id).rounds_scored == RUN_SNAPSHOT_INTERVAL + 2
