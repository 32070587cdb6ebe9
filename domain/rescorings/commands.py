"""The Verity application's re-scoring commands (a mixin of `domain.application.Verity`).

- `create_rescoring`: a finished RL run's stored answers (every round's rollouts) or a scored probe's, scored again
  with another reward: a preset with its settings or a custom metric version. It samples nothing, but a custom
  metric runs in the trainer's sandbox on the worker, so it is refused as a probe is: the Pro plan, and the member
  or owner role. The source must be the organization's own.
- progress the jobs record: `record_rescoring_scoring / _scored / _failed`.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from domain.actors import TRAINER, Actor
from domain.errors import NotFound, SettingsInvalid
from domain.probes.probe import SCORED as PROBE_SCORED
from domain.rescorings.rescoring import Rescoring
from domain.rewards.config import NOT_A_REWARD
from domain.runs import objectives
from domain.runs.reward import resolve_reward
from domain.runs.states import ADAPTER_READY, CANCELLED, COMPLETED, FAILED, STATUS_NAMES
from domain.verity_parts import VerityParts
from domain.written import Written

FINISHED_RUN = (ADAPTER_READY, COMPLETED, FAILED, CANCELLED)  # ended: no round will add answers any more
CHOOSE_SOURCE = "Choose the answers to re-score: a finished run of this organization, or a scored probe."
SAME_REWARD = "That is the reward these answers were scored with. Choose another reward."


class RescoringCommands(VerityParts):
    # provided by Verity
    _check_may_launch: Any
    custom_reward_problems: Any
    get_probe: Any
    get_run: Any

    def get_rescoring(self, org_id: UUID | None, rescoring_id: UUID) -> Rescoring:
        """`org_id` None is for the jobs, which act for whichever organization owns the re-scoring."""
        return self._get(Rescoring, rescoring_id, org_id, "re-scoring")

    def create_rescoring(self, org_id: UUID, *, source: Any, reward: Any, actor: Actor, role: str,
                         name: str = "") -> Written:
        """Saved and queued at once: the jobs score it, as the event log tells them."""
        self._check_may_launch(org_id, role, objectives.RL)  # like a probe: the Pro plan, member or owner
        errors: dict[str, str] = {}
        try:
            reward = resolve_reward(reward if isinstance(reward, dict) else None, is_trial=True)
        except SettingsInvalid as problem:
            errors.update(problem.errors)
        else:
            if reward.get("metric") in NOT_A_REWARD:
                errors["reward"] = (f"The {NOT_A_REWARD[reward['metric']]} can't be an RL reward. Choose a reward "
                                    "metric.")
            errors.update(self.custom_reward_problems(org_id, reward))
        found = self._rescoring_source(org_id, source, errors)
        if found is not None and "reward" not in errors and found["old_reward"] == reward:
            errors["reward"] = SAME_REWARD
        if errors or found is None:
            raise SettingsInvalid(errors)
        rescoring = Rescoring(
            org_id=org_id, project_id=found["project_id"],
            name=name.strip() or f"{found['source']['name']} re-scored",
            source=found["source"], old_reward=found["old_reward"], reward=reward, rounds=found["rounds"],
            actor=actor.to_dict(),
        )
        return Written(rescoring.id, self._save(rescoring))

    def _rescoring_source(self, org_id: UUID, source: Any, errors: dict[str, str]) -> dict[str, Any] | None:
        """The source's project, its answers' reward and rounds; None with its words under "source"."""
        kind = source.get("kind") if isinstance(source, dict) else None
        try:
            source_id = UUID(str(source.get("id"))) if kind in ("run", "probe") else None  # type: ignore[union-attr]
        except ValueError:
            source_id = None
        if source_id is None:
            errors["source"] = CHOOSE_SOURCE
            return None
        if kind == "probe":
            try:
                probe = self.get_probe(org_id, source_id)
            except NotFound:
                errors["source"] = "There is no such probe in this organization."
                return None
            if probe.state != PROBE_SCORED:
                errors["source"] = f"Re-score a scored probe: this one is {probe.status}."
                return None
            return {"project_id": probe.project_id, "old_reward": dict(probe.reward), "rounds": [1],
                    "source": {"kind": "probe", "id": str(probe.id), "name": probe.name}}
        try:
            run = self.get_run(org_id, source_id)
        except NotFound:
            errors["source"] = "There is no such run in this organization."
            return None
        if not objectives.is_rl(run.objective):
            errors["source"] = "Only an RL run has scored answers to re-score."
        elif run.state not in FINISHED_RUN:
            errors["source"] = f"Re-score a finished run: this one is {STATUS_NAMES[run.state]}."
        elif not run.last_round:
            errors["source"] = "That run trained no round, so it stored no answers to re-score."
        else:
            return {"project_id": run.project_id, "old_reward": dict(run.settings.reward or {}),
                    "rounds": list(range(1, run.last_round + 1)),
                    "source": {"kind": "run", "id": str(run.id), "name": run.settings.name or "Untitled run"}}
        return None

    # --- progress the jobs record --------------------------------------------------------------------------
    def record_rescoring_scoring(self, rescoring_id: UUID, actor: Actor = TRAINER) -> Written:
        rescoring = self.get_rescoring(None, rescoring_id)
        rescoring.start(actor.to_dict())
        return Written(rescoring.id, self._save(rescoring))

    def record_rescoring_scored(self, rescoring_id: UUID, summary: dict[str, Any],
                                actor: Actor = TRAINER) -> Written:
        rescoring = self.get_rescoring(None, rescoring_id)
        rescoring.score(summary, actor.to_dict())
        return Written(rescoring.id, self._save(rescoring))

    def record_rescoring_failed(self, rescoring_id: UUID, message: str, actor: Actor = TRAINER) -> Written:
        rescoring = self.get_rescoring(None, rescoring_id)
        rescoring.fail(message, actor.to_dict())
        return Written(rescoring.id, self._save(rescoring))
