"""Reward probes as jobs: the spec from the event store, `python -m trainer probe` as a child process watched by the
supervisor every child of the jobs has (jobs/supervisor.py), its progress lines turned into domain commands. The
actor is declared in jobs/actors.py; the dispatcher sends it for each Probe.Saved (jobs/dispatch_routes.py).

A cancel (Probe.Cancelled) is seen by the supervisor's poll, which kills the child's process group; a score that
arrives after it no longer applies to the probe and is not recorded (jobs/retrying.py).

The prompts are a run's: a dataset version's training rows, or the built-in Math Pairs task's rows a run with the
probe's reward and seed would train on (jobs/specs.py's rule), so the probe draws what that run's round 1 draws.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any
from uuid import UUID

from domain.actors import Actor
from domain.application import Verity
from domain.datasets.upload import RL_REFUSES_IMAGES
from domain.errors import NotFound
from domain.probes.probe import CANCELLED, Probe
from domain.rewards.config import SYNTHETIC_PROMPTS_DEFAULT
from domain.rewards.verifiable import math_pairs_rows
from domain.runs.run_settings import VALIDATION_SAMPLE
from jobs import retrying
from jobs.context import JobContext
from jobs.dispatch_routes import PROBE
from jobs.run_storage import RunStorage, StorageUnreadable, run_storage
from jobs.specs import SpecUnbuildable, _reward_spec, run_revision
from jobs.supervisor import Child, Supervisor, timing_of
from jobs.work_claims import Claim, work_on_claimed
from trainer.probe import ProbeSpec
from trainer.spec import ModelRef, Row, StartAdapter
from verity.storage import open_storage as open_file_storage
from verity.storage import read_rows

log = logging.getLogger(__name__)
PROBER = Actor("system", "prober", "Prober")
PROBE_TIME_LIMIT_SECONDS = 6 * 3600
WATCHDOG_STOPPED = (
    "The probe was still sampling {hours:g} hours after it started, so the watchdog stopped it. Probe fewer "
    "prompts, fewer answers per prompt or shorter answers."
)
STOPPED_EARLY = "The probe's process stopped before the probe ended; its last lines are in the worker's log."


def probe_rows(ctx: JobContext, probe: Probe) -> list[dict]:
    """The rows a run would train on: the version's training examples, or Math Pairs' rows for the probe's seed."""
    if probe.source["kind"] == "math_pairs":
        count = int(probe.reward.get("synthetic_prompts") or SYNTHETIC_PROMPTS_DEFAULT)
        train, _ = math_pairs_rows(probe.seed, count, validation_count=min(count, VALIDATION_SAMPLE))
        return list(train)
    try:
        version = ctx.verity.get_dataset_version(probe.org_id, UUID(probe.source["id"]))
    except (ValueError, NotFound):
        raise SpecUnbuildable("The probe's dataset version no longer exists in this organization.") from None
    if version.has_images:
        raise SpecUnbuildable(RL_REFUSES_IMAGES)
    rows = list(read_rows(open_file_storage(ctx.settings), version.storage_key, "train"))
    if not rows:
        raise SpecUnbuildable(f"The storage holds none of {version.label}'s training examples.")
    return rows


def model_revision(ctx: JobContext, probe: Probe) -> str | None:
    """An adapter samples on the revision its run trained on; the base model on the project's."""
    if probe.adapter_run is not None:
        try:
            return run_revision(ctx.verity, ctx.verity.get_run(probe.org_id, probe.adapter_run))
        except NotFound:
            pass
    try:
        return ctx.verity.get_project(probe.org_id, probe.project_id).revision
    except NotFound:
        return None


def build_probe_spec(ctx: JobContext, probe: Probe, storage: RunStorage) -> ProbeSpec:
    adapter = probe.adapter
    return ProbeSpec(
        probe_id=str(probe.id),
        model=ModelRef(path_or_id=probe.model, revision=model_revision(ctx, probe)),
        rows=[Row(prompt=list(r["prompt"]), reference=r["reference"]) for r in probe_rows(ctx, probe)],
        reward=_reward_spec(ctx.verity, probe.org_id, probe.reward),
        storage=storage.storage,
        prompts=probe.prompts,
        answers_per_prompt=probe.answers_per_prompt,
        max_answer_tokens=probe.max_answer_tokens,
        seed=probe.seed,
        adapter=StartAdapter(adapter["location"], adapter["sha256"], int(adapter["size_bytes"])) if adapter else None,
    )


def _apply(command: Callable[[], object], probe_id: UUID) -> bool:
    return retrying.record(command, f"probe {probe_id}")


def run_probe(ctx: JobContext, probe_id: UUID) -> None:
    """Sample and score the probe if it is still Queued (a message delivered twice finds it sampling, and does
    nothing); every outcome is recorded on it."""
    work_on_claimed(ctx, probe_id, PROBE, lambda work_id: ctx.verity.get_probe(None, work_id), _sample_and_score)


def _sample_and_score(ctx: JobContext, probe: Probe, held: Claim) -> None:
    verity, probe_id = ctx.verity, probe.id
    if not _apply(lambda: verity.record_probe_sampling(probe_id, PROBER), probe_id):
        return
    try:
        storage = run_storage(ctx.settings, verity, probe.org_id)
        spec = build_probe_spec(ctx, probe, storage)
    except (SpecUnbuildable, StorageUnreadable, NotFound, OSError) as problem:
        message = (
            str(problem)
            if isinstance(problem, (SpecUnbuildable, StorageUnreadable))
            else f"The prompts could not be read ({type(problem).__name__})."
        )
        _apply(lambda: verity.record_probe_failed(probe_id, message, PROBER), probe_id)
        return
    records = ProbeRecords(verity, probe_id)
    outcome = Supervisor(
        Child("probe", spec.to_dict(), f"probe {str(probe_id)[:8]}"),
        records,
        timing_of(ctx.config),
        kill_at=time.time() + PROBE_TIME_LIMIT_SECONDS,
        cancelled=lambda: verity.get_probe(None, probe_id).state == CANCELLED,  # stops the child within a poll
        beat=held.beat,
        environment=storage.child_environment,  # the organization's storage credentials reach the child only here
    ).run()
    if outcome.finished or records.finished or outcome.reason in ("cancelled", "lost"):
        return  # a line the child wrote after the cancel found the probe Cancelled and recorded nothing; lost: the
        # reconciler already ended it
    message = (
        WATCHDOG_STOPPED.format(hours=PROBE_TIME_LIMIT_SECONDS / 3600) if outcome.reason == "watchdog"
        else STOPPED_EARLY
    )
    _apply(lambda: verity.record_probe_failed(probe_id, message, PROBER), probe_id)


class ProbeRecords:
    """The probe's lines as commands on the probe (the supervisor's `Records`)."""

    def __init__(self, verity: Verity, probe_id: UUID) -> None:
        self.verity = verity
        self.probe_id = probe_id
        self.finished = False

    def record_line(self, data: dict[str, Any]) -> None:
        verity, probe_id = self.verity, self.probe_id
        if data["type"] == "probe_scored":
            self.finished = True
            _apply(lambda: verity.record_probe_scored(probe_id, data["summary"], PROBER), probe_id)
        elif data["type"] == "failed":
            self.finished = True
            _apply(lambda: verity.record_probe_failed(probe_id, data["message"], PROBER), probe_id)
