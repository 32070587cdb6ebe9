"""The reconciler asks the read models only for live runs (Queued, Preparing, Training, Saving adapter) of every
organization, not for every run ever made; a Queued run whose message was never sent is sent again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jobs.reconciler import reconcile
from migrations import apply_migrations
from projections.runner import ProjectionRunner
from verity.wiring import build_read_models

if TYPE_CHECKING:
    from conftest import World


def test_only_live_runs_are_listed_and_a_queued_run_nobody_sent_is_sent(world: World) -> None:
    apply_migrations(world.settings)
    read_models = build_read_models(world.settings, migrate=False)
    queued, training, cancelled = world.launched(), world.training(), world.launched()
    world.verity.cancel_run(world.org_id, cancelled, world.ctx.worker_actor)
    world.ctx.ledger.claim(training, "local", "alive", 1, stale_after=60.0)
    ProjectionRunner(world.verity, read_models).run_once()

    assert [row.id for row in read_models.live_runs()] == [queued, training]

    sent = []
    world.ctx.read_models = read_models
    assert reconcile(world.ctx, sent.append) == []
    assert sent == [queued]  # the training run's worker is alive; the cancelled run is nobody's business
