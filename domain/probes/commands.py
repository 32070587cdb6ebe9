"""The Verity application's probe commands (a mixin of `domain.application.Verity`).

- `create_probe`: a reward tried on a few prompts of a dataset version's training examples or the built-in Math
  Pairs task, with the base model or a finished run's adapter. It samples on the GPU a run would use, so it is
  refused as a trial's launch is: the Pro plan, and the member or owner role.
- `cancel_probe`: a queued or sampling probe, by a role that may probe (member or owner); the jobs stop its
  process and record nothing more on it.
- progress the jobs record: `record_probe_sampling / _scored / _failed`.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from domain.access import roles
from domain.actors import TRAINER, Actor
from domain.errors import ConcurrentChange, NotAllowed, SettingsInvalid
from domain.probes.probe import Probe
from domain.runs import objectives
from domain.runs.draft_checks import vision_refusal
from domain.runs.reward import MAKES_OWN_PROMPTS, makes_own_prompts, resolve_reward
from domain.runs.run_settings import FIELDS_BY_NAME
from domain.verity_parts import VerityParts
from domain.written import Written

MATH_PAIRS_SOURCE = {"kind": "math_pairs"}
PROBE_PROMPTS_DEFAULT, PROBE_PROMPTS_MOST = 64, 256
PROMPTS_MESSAGE = f"Prompts must be a whole number from 1 to {PROBE_PROMPTS_MOST}."
CHOOSE_PROMPTS = "Choose the prompts: a dataset version's training examples, or the built-in Math Pairs task."
CANCEL_ATTEMPTS = 5  # as a run's cancel: read again and asked again when the jobs recorded Sampling meanwhile


def _whole_number_in(value: Any, field: str) -> str | None:
    """None when `value` suits the run setting `field`, else its words (the Configure form's)."""
    spec = FIELDS_BY_NAME[field]
    if isinstance(value, bool) or not isinstance(value, int) or not spec.minimum <= value <= spec.maximum:  # type: ignore[operator]
        return spec.bounds_message()
    return None


class ProbeCommands(VerityParts):
    # provided by Verity
    _check_may_launch: Any
    _adapter_of: Any
    custom_reward_problems: Any
    dataset_version_problems: Any
    get_dataset_version: Any

    def get_probe(self, org_id: UUID | None, probe_id: UUID) -> Probe:
        """`org_id` None is for the jobs, which act for whichever organization owns the probe."""
        return self._get(Probe, probe_id, org_id, "probe")

    def create_probe(
        self,
        org_id: UUID,
        project_id: UUID,
        *,
        name: str,
        source: Any,
        reward: Any,
        actor: Actor,
        role: str,
        adapter_run: UUID | None = None,
        prompts: Any = PROBE_PROMPTS_DEFAULT,
        answers_per_prompt: Any = 8,
        max_answer_tokens: Any = 512,
        seed: Any = 0,
    ) -> Written:
        """Saved and queued at once: the jobs sample and score it, as the event log tells them."""
        self._check_may_launch(org_id, role, objectives.RL)  # like a trial: the Pro plan, member or owner
        project = self.get_project(org_id, project_id)
        errors: dict[str, str] = {}
        if project.vision:
            errors[""] = vision_refusal(project.model)
        try:
            reward = resolve_reward(reward if isinstance(reward, dict) else None, is_trial=True)
        except SettingsInvalid as problem:
            errors.update(problem.errors)
        else:
            errors.update(self.custom_reward_problems(org_id, reward))
        source = self._probe_source(org_id, source, reward if "reward" not in errors else None, errors)
        if isinstance(prompts, bool) or not isinstance(prompts, int) or not 1 <= prompts <= PROBE_PROMPTS_MOST:
            errors["prompts"] = PROMPTS_MESSAGE
        for field, value in (("answers_per_prompt", answers_per_prompt), ("max_answer_tokens", max_answer_tokens),
                             ("seed", seed)):
            if (words := _whole_number_in(value, field)) is not None:
                errors[field] = words
        adapter = self._adapter_of(org_id, project, adapter_run, errors)
        if errors:
            raise SettingsInvalid(errors)
        probe = Probe(
            org_id=org_id, project_id=project_id, name=name.strip() or "Reward probe", model=project.model,
            source=source, reward=reward, adapter_run=adapter_run, adapter=adapter, prompts=prompts,
            answers_per_prompt=answers_per_prompt, max_answer_tokens=max_answer_tokens, seed=seed,
            actor=actor.to_dict(),
        )
        return Written(probe.id, self._save(probe))

    def _probe_source(self, org_id: UUID, source: Any, reward: dict[str, Any] | None,
                      errors: dict[str, str]) -> dict[str, Any]:
        """The prompts: Math Pairs' own, or a version's training examples whose references suit the reward."""
        kind = source.get("kind") if isinstance(source, dict) else None
        if kind == "math_pairs":
            return dict(MATH_PAIRS_SOURCE)
        if kind != "dataset_version":
            errors["source"] = CHOOSE_PROMPTS
            return {}
        if makes_own_prompts(reward):
            errors["source"] = f"{MAKES_OWN_PROMPTS} Choose Math Pairs as the prompts."
            return {}
        problems = self.dataset_version_problems(org_id, str(source.get("id") or ""), reward)
        if problems:
            errors["source"] = problems["dataset_version"]
            return {}
        version = self.get_dataset_version(org_id, UUID(str(source["id"])))
        return {"kind": "dataset_version", "id": str(version.id), "label": version.label}

    def cancel_probe(self, org_id: UUID, probe_id: UUID, actor: Actor, role: str) -> Written:
        """Whoever may probe may cancel, on any plan (a plan changed meanwhile leaves them able to stop it). A
        cancel wins over the jobs' Sampling recorded at the same moment, as a run's cancel does over a round."""
        if not roles.may(role, roles.LAUNCH):  # member or owner, as for a trial; a viewer is told what viewers may
            raise NotAllowed(roles.VIEWERS_READ_ONLY)
        for attempt in range(CANCEL_ATTEMPTS):
            probe = self.get_probe(org_id, probe_id)
            probe.cancel(actor.to_dict())
            try:
                return Written(probe.id, self._save(probe))
            except ConcurrentChange:
                if attempt == CANCEL_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    # --- progress the jobs record --------------------------------------------------------------------------
    def record_probe_sampling(self, probe_id: UUID, actor: Actor = TRAINER) -> Written:
        probe = self.get_probe(None, probe_id)
        probe.start(actor.to_dict())
        return Written(probe.id, self._save(probe))

    def record_probe_scored(self, probe_id: UUID, summary: dict[str, Any], actor: Actor = TRAINER) -> Written:
        probe = self.get_probe(None, probe_id)
        probe.score(summary, actor.to_dict())
        return Written(probe.id, self._save(probe))

    def record_probe_failed(self, probe_id: UUID, message: str, actor: Actor = TRAINER) -> Written:
        probe = self.get_probe(None, probe_id)
        probe.fail(message, actor.to_dict())
        return Written(probe.id, self._save(probe))

