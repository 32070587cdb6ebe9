"""What a killed run costs (trainer/checkpoint.py): on the tiny model, the run of tests/trainer/test_resume_killed.py
uninterrupted, then killed with SIGKILL (the trainer's whole process group) at random points and resumed each time
from its last reported round until it ends; the extra seconds the kills cost, per kill, split into the resumed
trainers' start (process, imports, model load) and the round work lost at the kill and redone; and whether the
resumed run ended exactly as the uninterrupted one (every round's numbers, the rollouts, the kept adapter's sha256).

Every trainer runs with MKL_NUM_THREADS=1 and OMP_NUM_THREADS=1 (the test's reason: bitwise-reproducible runs).

Run: .venv/bin/python bench/resume.py [--rounds 8] [--kills 5] [--seed 6] [--prompts-per-round 32]
     (about a minute on 2 cores with the defaults; prints one line per figure and one per kill)
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from tests.trainer.conftest import make_spec  # noqa: E402  (the tests' spec of a tiny-model run)
from tests.trainer.test_resume_killed import (  # noqa: E402  (the test's scenario)
    Segment,
    adapter_sha256,
    differences,
    killed_run,
    pace_of,
    plan_kills,
    run_segment,
    spec_dict,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--seed", type=int, default=6, help="the kill points' random seed")
    parser.add_argument("--prompts-per-round", type=int, default=32)
    args = parser.parse_args()
    model = REPO / ".tiny-model" / "v1-seed0"
    if not (model / "tiny_model.json").exists():
        print("tiny model: not built (run the tests once, or python -m trainer tiny-model)")
        return 1
    if args.rounds < args.kills + 3:  # each kill after at most one more round, and none in the last
        print(f"--rounds {args.rounds} is too few for {args.kills} kills: give at least --kills + 3")
        return 1
    build = partial(make_spec, model)
    settings = {"rounds": args.rounds, "prompts_per_round": args.prompts_per_round}
    with tempfile.TemporaryDirectory() as root:
        whole_storage, storage = Path(root) / "uninterrupted", Path(root) / "killed"
        whole_storage.mkdir()
        storage.mkdir()
        whole = run_segment(spec_dict(build, whole_storage, **settings), whole_storage, "whole")
        if whole.returncode != 0:
            print(f"the uninterrupted run failed: {whole.log.read_text()[-2000:]}")
            return 1
        pace = pace_of(whole)
        print(f"uninterrupted: {args.rounds} rounds in {whole.seconds:.1f} s (start and model load {pace.start:.1f} s, "
              f"a round {pace.round:.2f} s, its checkpoint {pace.checkpoint * 1000:.0f} ms)")

        plan = plan_kills(random.Random(args.seed), args.kills, pace)
        started = time.monotonic()
        segments = killed_run(spec_dict(build, storage, **settings), storage, storage, plan)
        wall = time.monotonic() - started
        total = sum(s.seconds for s in segments)
        kills = [s for s in segments if s.killed_at is not None]
        starts = sum(_start_seconds(s) for s in segments[1:])
        lost = sum(_lost_seconds(s) for s in kills)
        extra = total - whole.seconds
        print(f"killed {len(kills)} times and resumed: {len(segments)} trainers, {total:.1f} s in all "
              f"({wall:.1f} s of wall time)")
        print(f"extra: {extra:.1f} s, {extra / max(len(kills), 1):.2f} s per kill: start and model load "
              f"{starts / max(len(kills), 1):.2f} s, round work lost and redone {lost / max(len(kills), 1):.2f} s, "
              f"other (checkpoint loads, exits, noise) {(extra - starts - lost) / max(len(kills), 1):.2f} s")
        for number, segment in enumerate(segments, start=1):
            if segment.kill is not None:
                aim = segment.kill
                print(f"kill {number}: aimed {aim.records} round(s) + {aim.delay:.2f} s ({aim.aim}), fell at "
                      f"{segment.killed_at:.2f} s {segment.fell}; rounds reported {segment.rounds()}")
        found = differences(whole, whole_storage, segments, storage)
        best = whole.records[-1]["best_round"]
        if found:
            print("results: DIFFER from the uninterrupted run:\n  " + "\n  ".join(found))
            return 1
        print(f"results: identical to the uninterrupted run ({args.rounds + 1} round records, best round {best}, "
              f"adapter sha256 {adapter_sha256(storage)[:16]}...)")
    return 0


def _start_seconds(segment: Segment) -> float:
    """A resumed trainer's seconds to its prepared record: process start, imports, model load (all of them when it
    was killed before)."""
    prepared = segment.prepared_at()
    return prepared if prepared is not None else (segment.killed_at or segment.seconds)


def _lost_seconds(segment: Segment) -> float:
    """A killed trainer's work since its last record (a round's, or the prepared one), which the next one redoes."""
    if segment.prepared_at() is None:
        return 0.0  # killed while starting: counted in the start's seconds
    return segment.killed_at - segment.times[-1]


if __name__ == "__main__":
    raise SystemExit(main())
