"""A run killed with SIGKILL at random points, several times, and resumed each time from the last round it
reported, ends exactly as the same run never killed: the same rounds, each reported once, with the same rewards,
validation rewards, losses and best round, the same rollouts, the same kept adapter (its sha256) and the same end.

Each segment is `python -m trainer run SPEC.json` in a session of its own; a kill is SIGKILL to that whole process
group (the trainer and anything it started). The test plays the worker: the records it read are those the trainer
printed (whole lines only, those still in the pipe when it died included), and the next segment is the same spec
resuming from the last round_scored record's round and checkpoint sha256 (ResumeFrom), as jobs/ resumes a lost run.
The first kill comes after at least one round with a checkpoint was reported (a run lost before its first
checkpoint is started again, not resumed); a later one may fall while the resumed trainer starts.

Exact equality, not test_resume.py's tolerances: two runs of the same spec in two processes on this CPU are bitwise
identical when MKL does its matrix products on one thread. With MKL's default threads (2 here) two uninterrupted
runs differ in the last digits (a round's grad_norm 0.88255900 against 0.88255894, token entropies by about 1e-7)
and so do their adapters' sha256: MKL's threaded sgemm does not add in the same order run to run (neither
MKL_CBWR=COMPATIBLE,STRICT nor MKL_DYNAMIC=FALSE makes it); with MKL_NUM_THREADS=1 every pair of runs tried
matched to the bit, and this test fails without it. So every trainer here runs with MKL_NUM_THREADS=1, and
OMP_NUM_THREADS=1 to keep the rounds' pace, from which the kill points are drawn, steady on a shared machine (two
threads per trainer on a busy 2-core machine made rounds ten times slower). A checkpoint's own sha256 differs from
run to run (it holds the slowest round's seconds, for the time limit), so the records' checksums are not compared.

The kill points come from random.Random(KILL_SEED) and the uninterrupted run's pace: the same seed gives the same
plan, though not the same instants (the machine's speed varies); a failure prints the seed, the plan and where each
kill fell. bench/resume.py runs the same scenario and prints what the kills cost.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import queue
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
RUN_ID = "run-1"  # make_spec's
ROUNDS, KILLS, KILL_SEED = 8, 4, 6
SETTINGS = {"prompts_per_round": 32, "validation_sample_size": 64}  # rounds of about 0.7 s on one core
ONE_THREAD = {"MKL_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}  # bitwise-reproducible runs (see above)
# not the run's: the machine's timings and memory, and the checkpoint's checksum
MACHINE_FIELDS = ("seconds", "peak_memory_bytes", "checkpoint_seconds", "checkpoint_sha256", "grading_seconds_median",
                  "grading_seconds_p95")
SEGMENT_TIMEOUT = 300  # seconds without a record: the trainer hangs
# where a kill aims
RIGHT_AFTER_A_RECORD, MID_ROUND, CHECKPOINT_WRITING = "right after a record", "mid-round", "the checkpoint's writing"
STARTING = "the start or the first round"


@dataclass(frozen=True)
class KillPoint:
    """Where a segment is killed: after `records` round records with a checkpoint of its own, `delay` seconds later
    (0: at once), or, aiming at the checkpoint's writing, `delay` seconds after the next round's rollouts file is
    written (just before its checkpoint); with `records` 0, `delay` seconds after the segment started."""

    records: int
    delay: float
    aim: str


@dataclass(frozen=True)
class Pace:
    """The uninterrupted run's timings, from which the kill points are drawn."""

    start: float  # seconds from the process's start to its prepared record (start, imports, model loaded)
    round: float  # median seconds between two round records
    checkpoint: float  # median seconds of a checkpoint's writing


@dataclass
class Segment:
    """One trainer process: the records it printed, and when (seconds after its start)."""

    records: list[dict[str, Any]]
    times: list[float]
    seconds: float  # from its start to its exit
    returncode: int
    kill: KillPoint | None = None
    killed_at: float | None = None
    fell: str = ""  # where the kill fell, as the storage and the records show it
    log: Path | None = None

    def rounds(self) -> list[int]:
        return [r["round"] for r in self.records if r["type"] == "round_scored"]

    def prepared_at(self) -> float | None:
        return next((t for r, t in zip(self.records, self.times, strict=True) if r["type"] == "prepared"), None)


def spec_dict(run_spec: Callable[..., Any], storage: Path, rounds: int = ROUNDS, **settings: Any) -> dict[str, Any]:
    """The tests' tiny-model run (`run_spec`: the fixture, or make_spec bound to the model) as the JSON the
    trainer's command line reads."""
    return run_spec(storage, rounds=rounds, **{**SETTINGS, **settings}).to_dict()


def run_segment(spec: dict[str, Any], folder: Path, name: str, kill: KillPoint | None = None,
                last_round: int | None = None) -> Segment:
    """Start the trainer on `spec`, read its records, and kill its process group at `kill` (never later than right
    after the record of round `last_round`, so that a killed segment never ends the run)."""
    spec_path, log = folder / f"{name}.json", folder / f"{name}.log"
    spec_path.write_text(json.dumps(spec))
    rollouts = Path(spec["storage"]["location"]) / "runs" / RUN_ID / "rollouts"
    lines: queue.Queue[tuple[float, bytes] | None] = queue.Queue()
    with log.open("wb") as stderr:
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-m", "trainer", "run", str(spec_path)], cwd=REPO, stdout=subprocess.PIPE,
            stderr=stderr, env={**os.environ, **ONE_THREAD}, start_new_session=True,
        )
        reader = threading.Thread(target=_read_lines, args=(process.stdout, lines), daemon=True)
        reader.start()
        records: list[dict[str, Any]] = []
        times: list[float] = []
        kill_at = started + kill.delay if kill is not None and kill.records == 0 else None
        watched: tuple[Path, int] | None = None  # a rollouts file: `kill.delay` after it is written, the kill
        killed_at = None
        while True:
            now = time.monotonic()
            if watched is not None and kill_at is None and _written_since(*watched):
                kill_at = now + kill.delay
            if kill_at is not None and now >= kill_at:
                os.killpg(process.pid, signal.SIGKILL)
                killed_at = now - started
                break
            wait = SEGMENT_TIMEOUT if kill_at is None else kill_at - now
            try:
                item = lines.get(timeout=0.001 if watched is not None and kill_at is None else wait)
            except queue.Empty:
                if kill_at is None and watched is None:
                    os.killpg(process.pid, signal.SIGKILL)
                    raise AssertionError(f"no record for {SEGMENT_TIMEOUT} s; see {log}") from None
                continue
            if item is None:
                break  # the trainer ended by itself
            _take(item, started, records, times)
            if kill is not None and kill_at is None and watched is None and _checkpointed(records) == kill.records:
                if kill.aim == CHECKPOINT_WRITING:  # the next round's rollouts come just before its checkpoint
                    watched = (rollouts / f"round-{records[-1]['round'] + 1:03d}.jsonl", time.time_ns())
                else:
                    kill_at = started + times[-1] + kill.delay
            if kill is not None and records[-1]["type"] == "round_scored" and records[-1]["round"] == last_round:
                kill_at = now  # at once: the next round is the last
        reader.join()
        while (item := lines.get_nowait() if not lines.empty() else None) is not None:
            _take(item, started, records, times)  # printed before the kill: the worker reads them
        returncode = process.wait()
    return Segment(records, times, time.monotonic() - started, returncode, kill, killed_at, log=log)


def _written_since(path: Path, since_ns: int) -> bool:
    try:
        return path.stat().st_mtime_ns >= since_ns
    except FileNotFoundError:
        return False


def _read_lines(stream, lines: queue.Queue) -> None:
    for line in iter(stream.readline, b""):
        if line.endswith(b"\n"):  # a line cut by the kill was never printed whole
            lines.put((time.monotonic(), line))
    lines.put(None)


def _take(item: tuple[float, bytes], started: float, records: list, times: list) -> None:
    records.append(json.loads(item[1]))
    times.append(item[0] - started)


def _checkpointed(records: list[dict[str, Any]]) -> int:
    return sum(1 for r in records if r["type"] == "round_scored" and r.get("checkpoint_sha256"))


def pace_of(whole: Segment) -> Pace:
    rounds = [(r, t) for r, t in zip(whole.records, whole.times, strict=True) if r["type"] == "round_scored"]
    gaps = [later[1] - earlier[1] for earlier, later in itertools.pairwise(rounds)]
    checkpoints = [r["checkpoint_seconds"] for r, _ in rounds if r.get("checkpoint_seconds") is not None]
    return Pace(whole.prepared_at() or 0.0, statistics.median(gaps), statistics.median(checkpoints))


def plan_kills(rng: random.Random, kills: int, pace: Pace) -> list[KillPoint]:
    """`kills` kill points: the first after one or two rounds with a checkpoint, the others after one of their
    segment's rounds (or, one time in four, none); right after a record, mid-round, about the checkpoint's writing,
    or while the trainer starts or plays its first round."""
    plan = []
    for number in range(kills):
        records = rng.randint(1, 2) if number == 0 else int(rng.random() >= 0.25)
        if records == 0:
            plan.append(KillPoint(0, round(rng.uniform(0, pace.start + pace.round), 3), STARTING))
            continue
        aim = rng.choice([RIGHT_AFTER_A_RECORD, MID_ROUND, CHECKPOINT_WRITING])
        delay = {RIGHT_AFTER_A_RECORD: 0.0,
                 MID_ROUND: rng.uniform(0.1, 0.9) * pace.round,
                 CHECKPOINT_WRITING: rng.uniform(0, 1.5 * pace.checkpoint)}[aim]
        plan.append(KillPoint(records, round(delay, 3), aim))
    return plan


def killed_run(spec: dict[str, Any], storage: Path, folder: Path, plan: list[KillPoint]) -> list[Segment]:
    """The run of `spec` killed at each point of `plan`, each time resumed from its last round record, until it
    ends."""
    segments: list[Segment] = []
    for kill in [*plan, None]:
        reported = [r for s in segments for r in s.records if r["type"] == "round_scored"]
        resume = None
        if segments:
            last = reported[-1]
            assert last.get("checkpoint_sha256"), "killed before a checkpoint was reported"
            resume = {"round": last["round"], "sha256": last["checkpoint_sha256"]}
        segment_started = time.time()
        segment = run_segment({**spec, "resume": resume}, folder, f"segment-{len(segments) + 1}", kill,
                              last_round=spec["rounds"] - 1)
        if kill is not None:
            last_round = ([r["round"] for r in reported] + segment.rounds())[-1]
            segment.fell = _where_it_fell(segment, storage, last_round, segment_started)
        segments.append(segment)
        if segment.killed_at is None:
            break  # it ended by itself (or failed): nothing to resume
    return segments


def _where_it_fell(segment: Segment, storage: Path, last_round: int, since: float) -> str:
    run = storage / "runs" / RUN_ID
    following = f"round-{last_round + 1:03d}"

    def written(path: Path) -> bool:
        return path.exists() and path.stat().st_mtime >= since

    if written(run / "checkpoints" / f"{following}.pt.partial"):
        return f"while round {last_round + 1}'s checkpoint was written"
    if written(run / "checkpoints" / f"{following}.pt"):
        return f"after round {last_round + 1}'s checkpoint, before its record"
    if written(run / "rollouts" / f"{following}.jsonl"):
        return f"after round {last_round + 1}'s rollouts, before its checkpoint"
    if segment.prepared_at() is None:
        return "while the trainer started (imports, model load)"
    since_last = segment.killed_at - segment.times[-1]
    if segment.records[-1]["type"] == "prepared":
        return f"in resumed round {last_round + 1}, {since_last:.2f} s after the prepared record"
    return f"in round {last_round + 1}, {since_last:.2f} s after round {last_round}'s record"


def story(seed: int, plan: list[KillPoint], segments: list[Segment]) -> str:
    """The kills, in words: what a failure prints."""
    lines = [f"kill seed {seed}; plan: {plan}"]
    for number, s in enumerate(segments, start=1):
        end = f"killed at {s.killed_at:.2f} s {s.fell}" if s.killed_at is not None else f"exit {s.returncode}"
        lines.append(f"segment {number}: rounds {s.rounds()} in {s.seconds:.2f} s, {end} (log {s.log})")
    return "\n".join(lines)


def learned(record: dict[str, Any]) -> dict[str, Any]:
    """All a record says of the run, without what is the machine's (seconds, memory, checkpoint checksums)."""
    return {key: value for key, value in record.items() if key not in MACHINE_FIELDS}


def adapter_sha256(storage: Path) -> str:
    weights = storage / "runs" / RUN_ID / "adapter" / "adapter_model.safetensors"
    return hashlib.sha256(weights.read_bytes()).hexdigest()


def differences(whole: Segment, whole_storage: Path, segments: list[Segment], storage: Path) -> list[str]:
    """What the killed-and-resumed run ended with that the uninterrupted one did not, in words (none: identical)."""
    found = []
    expected = {r["round"]: learned(r) for r in whole.records if r["type"] == "round_scored"}
    got = [learned(r) for s in segments for r in s.records if r["type"] == "round_scored"]
    if [r["round"] for r in got] != sorted(expected):
        found.append(f"rounds reported {[r['round'] for r in got]}, not {sorted(expected)} once each")
    for record in got:
        if record != expected.get(record["round"]):
            wrong = {k: (v, expected.get(record["round"], {}).get(k)) for k, v in record.items()
                     if v != expected.get(record["round"], {}).get(k)}
            found.append(f"round {record['round']}: {wrong} (resumed, uninterrupted)")
    for kind in ("adapter_saved", "completed"):
        ours = [{k: v for k, v in r.items() if k != "location"} for r in segments[-1].records if r["type"] == kind]
        theirs = [{k: v for k, v in r.items() if k != "location"} for r in whole.records if r["type"] == kind]
        if ours != theirs:
            found.append(f"{kind}: {ours} against {theirs}")
    if adapter_sha256(storage) != adapter_sha256(whole_storage):
        found.append(f"kept adapter sha256 {adapter_sha256(storage)} against {adapter_sha256(whole_storage)}")
    for path in sorted((whole_storage / "runs" / RUN_ID / "rollouts").iterdir()):
        if (storage / path.relative_to(whole_storage)).read_bytes() != path.read_bytes():
            found.append(f"{path.name} differs")
    return found


@pytest.fixture(scope="module")
def uninterrupted(run_spec, tmp_path_factory) -> tuple[Segment, Path]:
    storage = tmp_path_factory.mktemp("uninterrupted")
    whole = run_segment(spec_dict(run_spec, storage), storage, "whole")
    assert whole.returncode == 0 and whole.records[-1]["type"] == "completed", whole.log.read_text()[-3000:]
    return whole, storage


@pytest.fixture(scope="module")
def killed(run_spec, uninterrupted, tmp_path_factory) -> tuple[list[Segment], Path, str]:
    storage = tmp_path_factory.mktemp("killed")
    plan = plan_kills(random.Random(KILL_SEED), KILLS, pace_of(uninterrupted[0]))
    segments = killed_run(spec_dict(run_spec, storage), storage, storage, plan)
    return segments, storage, story(KILL_SEED, plan, segments)


def test_each_kill_fell_before_the_end_and_every_round_was_reported_once(killed):
    segments, _, told = killed
    assert [s.returncode for s in segments] == [-signal.SIGKILL] * KILLS + [0], told
    assert all(s.killed_at is not None for s in segments[:-1]), told
    for killed_number in range(1, KILLS + 1):  # each kill came after a round with a checkpoint was reported
        assert _checkpointed([r for s in segments[:killed_number] for r in s.records]) >= 1, told
    assert segments[0].rounds()[:2] == [0, 1], told  # round 0, then at least one round with its checkpoint
    rounds = [n for s in segments for n in s.rounds()]
    assert rounds == list(range(ROUNDS + 1)), told  # a redone round was not printed before the kill
    for segment in segments[1:]:
        assert [r["type"] for r in segment.records][:1] in ([], ["prepared"]), told
    assert [r["type"] for r in segments[-1].records][-2:] == ["adapter_saved", "completed"], told
    assert not any(r["type"] == "failed" for s in segments for r in s.records), told


def test_the_resumed_run_ends_exactly_as_the_uninterrupted_one(uninterrupted, killed):
    whole, whole_storage = uninterrupted
    segments, storage, told = killed
    assert differences(whole, whole_storage, segments, storage) == [], told
    assert list((storage / "runs" / RUN_ID / "checkpoints").iterdir()) == [], told  # a run that ended keeps none
