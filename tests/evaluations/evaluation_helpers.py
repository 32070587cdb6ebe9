"""Stories' helpers: a world with an organization, a project, baselines and finished runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from consoles import record_trained

from domain.actors import Actor
from domain.application import Verity
from domain.rewards.types import AnswerScore
from domain.runs.settings import run_body_from_api

OWNER = Actor("person", "owner@localhost", "owner@localhost")
MATH_PAIRS_SCORING = {"preset": "verifiable", "format_bonus": True}
HELD_OUT = {"kind": "benchmark", "name": "math_pairs_held_out", "count": 8}


@dataclass
class World:
    verity: Verity
    org_id: UUID
    project_id: UUID

    def evaluation(self, main_metric: str = "math_pairs", scoring: dict | None = None, **options: Any) -> UUID:
        return self.verity.create_evaluation(
            self.org_id, self.project_id, name="Baseline", source=HELD_OUT,
            scoring=scoring or MATH_PAIRS_SCORING, main_metric=main_metric, actor=OWNER, **options,
        ).id

    def completed(self, evaluation_id: UUID, score: float = 0.45) -> UUID:
        self.verity.record_evaluation_started(evaluation_id)
        results = [{"index": 0, "prompt": "What is 2+3?", "reference": "5", "answer": "5", "score": score}]
        self.verity.record_evaluation_completed(evaluation_id, score, {"score": score, "accuracy": score / 0.9},
                                                results)
        return evaluation_id

    def full_run(self, **top: Any) -> UUID:
        body = {"name": "math", "training": {"rl": {"rounds": 1, "reward": None}}, **top}
        return self.verity.save_run(self.org_id, self.project_id, run_body_from_api(body), OWNER).id

    def finished_run(self, **top: Any) -> UUID:
        run_id = self.full_run(**top)
        self.verity.launch_run(self.org_id, run_id, OWNER, "member")
        record_trained(self.verity, run_id)
        return run_id


def new_world(plan: str = "pro") -> World:
    verity = Verity(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    org_id = verity.create_organization("Acme", plan, OWNER).id
    project_id = verity.create_project(org_id, "Demo", "tiny-math", None, False, OWNER).id
    return World(verity, org_id, project_id)


def score(value: float, **parts: float) -> AnswerScore:
    return AnswerScore(value, parts=parts)
