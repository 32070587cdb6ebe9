"""The price a run is launched against is its provider's, as an owner declared it; `local`, which no owner prices,
costs what its worker declares. A run over its Price limit fails before any GPU time is spent."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from domain.actors import Actor
from domain.runs.settings import run_body_from_api
from jobs.launching import launch, price_per_hour

if TYPE_CHECKING:
    from conftest import World

OWNER = Actor("person", "owner@localhost", "owner@localhost")
MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 16}


def launched_on(world: World, provider: str, price_limit: float) -> object:
    training = {"provider": provider, "price_limit_per_hour": price_limit, "rl": {"reward": MATH_PAIRS, "rounds": 2}}
    body = {"training": training}
    run_id = world.verity.save_run(world.org_id, world.project_id, run_body_from_api(body), OWNER).id
    world.verity.launch_run(world.org_id, run_id, OWNER, "owner")
    return run_id


def test_a_run_on_a_declared_provider_costs_its_price_and_fails_over_its_price_limit(world: World) -> None:
    world.verity.set_provider(world.org_id, "h100-pool", "H100 80GB", 9.0, OWNER, "owner")
    run_id = launched_on(world, "h100-pool", price_limit=5.0)
    assert price_per_hour(world.ctx, world.verity.get_run(None, run_id)) == 9.0

    launch(world.ctx, run_id)  # the worker takes it: refused before the trainer starts

    run = world.verity.get_run(None, run_id)
    assert run.state == "failed"
    assert run.failure.startswith("This provider's worker costs $9/hour, above the run's Price limit ($5/hour).")


def test_a_local_run_costs_what_its_worker_declares(world: World) -> None:
    run_id = launched_on(world, "local", price_limit=5.0)
    assert price_per_hour(world.ctx, world.verity.get_run(None, run_id)) is None  # this worker declared none
    priced = replace(world.ctx, config=replace(world.ctx.config, worker_price_per_hour=0.5))
    assert price_per_hour(priced, world.verity.get_run(None, run_id)) == 0.5
