"""The run page's parts as a test drives them: a console in-process on SQLite with local storage, runs recorded
the way the jobs record them (tests/run_page/test_run_page_parts.py and the tests of single parts)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from uuid import UUID

import pytest
from consoles import ClientConsole, client_console
from rounds import scored_round

from domain.actors import Actor
from domain.runs.settings import run_body_from_api
from verity.config import Settings
from verity.storage import LocalStorage, open_storage

OWNER = Actor("person", "owner@localhost", "owner@localhost")
HTMX = {"HX-Request": "true"}


class SentMerges(list):
    """The merges the app sent to the jobs; `broken` stands for a broker out of reach (its send raises)."""

    broken = False

    def append(self, run_id: UUID) -> None:
        if self.broken:
            raise ConnectionError("the broker is out of reach")
        super().append(run_id)


MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 64, "format_bonus": True}
# The figures the parts show for each round after round 0: a quick round of updates on a few answers.
QUICK_ROUND = {
    "signal": 0.5,
    "cut_off": 0.25,
    "graded_answers": 3,
    "updated": True,
    "loss": 0.02,
    "sampling_seconds": 3.0,
    "grading_seconds": 0.5,
    "update_seconds": 2.0,
    "validation_seconds": 1.0,
    "mean_answer_tokens": 9.0,
    "token_entropy": 1.1,
}


@dataclass
class Page(ClientConsole):
    storage: LocalStorage
    merged: SentMerges

    def finished_run(self) -> UUID:
        run_id = self.launched_run(rounds=2)
        for number, reward, validation in ((0, None, 0.30), (1, 0.40, 0.45), (2, 0.55, 0.50)):
            self.score(run_id, number, reward, validation)
        self.verity.record_saving_adapter(run_id)
        self.verity.record_adapter_ready(run_id, 2, f"runs/{run_id}/adapter", "ab" * 32, 4)
        self.verity.record_completed(run_id)
        return run_id

    def launched_run(self, rounds: int = 3, kind: str = "full") -> UUID:
        body = {"name": "parts", "kind": kind, "training": {"rl": {"rounds": rounds, "reward": MATH_PAIRS}}}
        run_id = self.verity.save_run(self.org_id, self.project_id, run_body_from_api(body), OWNER).id
        self.verity.launch_run(self.org_id, run_id, OWNER, "owner")
        self.verity.record_preparing(run_id)
        return run_id

    def score(self, run_id: UUID, number: int, reward: float | None, validation: float) -> None:
        """A round (round 0 with no `reward`) as the trainer reports it, recorded the way the jobs record it."""
        result = scored_round(number, validation, QUICK_ROUND, reward=reward, accuracy=reward)
        self.verity.record_round_scored(run_id, result)

    def rollouts(self, run_id: UUID, number: int, lines: list[dict]) -> None:
        staged = self.storage.stage(f"runs/{run_id}/rollouts/round-{number:03d}.jsonl")
        staged.write("".join(json.dumps(line) + "\n" for line in lines).encode())
        staged.commit()


@pytest.fixture
def page(sqlite_settings: Settings) -> Iterator[Page]:
    merged = SentMerges()  # the jobs follow the event log and send each merge here
    storage = open_storage(sqlite_settings)
    with client_console(sqlite_settings, Page, {"merge": merged.append}, storage, merged=merged) as page:
        yield page


def rollout_line(prompt: str, answers: list[tuple[str, float, bool, str | None]]) -> dict:
    return {
        "prompt": [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": prompt}],
        "reference": "80",
        "answers": [
            {"answer": text, "reward": reward, "cut_off": cut, "failure": failure, "tokens": 4}
            for text, reward, cut, failure in answers
        ],
    }
