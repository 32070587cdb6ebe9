"""`python -m trainer rescore` on stored answers written by hand: every answer scored again with another reward
(Exact match against its reference), what moved, the groups that gain or lose signal, the signal per round under
each reward, a missing round named, and the stored files left byte for byte as they were."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from trainer.rescore import RescoreSpec, StoredAnswers, rescore
from trainer.spec import RewardSpec, Storage

EXACT = {"preset": "qa", "metric": "exact_match"}


def prompt_line(reference: str, answers: list[tuple[str, float]], cut_off: int | None = None) -> str:
    return json.dumps({"prompt": [{"role": "user", "content": f"What is {reference}?"}], "reference": reference,
                       "answers": [{"answer": text, "reward": reward, "cut_off": j == cut_off, "failure": None,
                                    "tokens": 3} for j, (text, reward) in enumerate(answers)]})


ROUND_1 = "\n".join([
    prompt_line("5", [("5", 1.0), (" 5 ", 1.0)]),  # all alike before, and after (both match)
    prompt_line("7", [("7.0", 1.0), ("7", 1.0)]),  # alike before; "7.0" is no exact match: gains signal
]) + "\n"
ROUND_2 = "\n".join([
    prompt_line("3", [("3", 1.0), ("4", 0.5)]),  # varied before, varied after; "4" moves 0.5 → 0
    prompt_line("9", [("9", 0.0), ("nine", 1.0)], cut_off=0),  # cut off stays 0; "nine" moves 1 → 0: loses signal
]) + "\n"


def test_stored_answers_are_scored_again_and_left_as_they_were(tmp_path: Path) -> None:
    storage = tmp_path / "storage"
    (storage / "runs/r1/rollouts").mkdir(parents=True)
    (storage / "runs/r1/rollouts/round-001.jsonl").write_text(ROUND_1)
    (storage / "runs/r1/rollouts/round-002.jsonl").write_text(ROUND_2)
    before = {p: p.read_bytes() for p in (storage / "runs").rglob("*.jsonl")}
    files = [StoredAnswers(n, f"runs/r1/rollouts/round-{n:03d}.jsonl") for n in (1, 2, 3)]
    spec = RescoreSpec("s1", files, RewardSpec(config=EXACT), Storage(location=str(storage)))
    lines: list[dict] = []
    assert rescore(spec, emit=lines.append)

    assert [line["type"] for line in lines] == ["rescoring_started", "rescoring_scored"]
    s = lines[-1]["summary"]
    assert (s["answers"], s["graded"], s["moved"], s["raised"], s["lowered"]) == (8, 7, 3, 0, 3)
    assert (s["gained_signal"], s["lost_signal"], s["gained"], s["lost"]) == (
        1, 1, [{"round": 1, "prompt": 1}], [{"round": 2, "prompt": 1}])
    assert s["per_round"] == {"round": [1, 2], "groups": [2, 2], "answers": [4, 4], "moved": [1, 2],
                              "signal_old": [0.0, 1.0], "signal_new": [0.5, 0.5], "mean_old": [1.0, 0.625],
                              "mean_new": [0.75, 0.25]}
    assert s["missing_rounds"] == [3] and s["answers_key"] == "rescorings/s1/answers.jsonl"
    answers = [json.loads(line) for line in (storage / s["answers_key"]).read_text().splitlines()]
    moved = [(a["round"], a["prompt"], a["answer"], a["old"], a["new"]) for a in answers if a["old"] != a["new"]]
    assert moved == [(1, 1, 0, 1.0, 0.0), (2, 0, 1, 0.5, 0.0), (2, 1, 1, 1.0, 0.0)]
    assert {p: p.read_bytes() for p in (storage / "runs").rglob("*.jsonl")} == before


def test_answers_the_storage_no_longer_holds_fail_in_words(tmp_path: Path) -> None:
    """`python -m trainer rescore` as the jobs start it: a source whose files are gone ends Failed, in words."""
    storage = tmp_path / "storage"
    storage.mkdir()
    spec = RescoreSpec("s2", [StoredAnswers(1, "probes/p1/answers.jsonl")], RewardSpec(config=EXACT),
                       Storage(location=str(storage)))
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec.to_dict()))
    done = subprocess.run([sys.executable, "-m", "trainer", "rescore", str(spec_file)], capture_output=True,
                          text=True, timeout=120)
    last = json.loads(done.stdout.splitlines()[-1])
    assert (done.returncode, last) == (1, {"type": "failed", "message": "The storage no longer holds any of these "
                                                                        "answers, so there is nothing to re-score."})
    assert not (storage / "rescorings").exists()
