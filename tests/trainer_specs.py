"""The settings of a trainer spec in a test, filled as the jobs fill them: a run's settings (the product's defaults
from domain/runs/run_settings.py, with what the test names) through jobs/specs.py's `training_spec` or
jobs/tune_specs.py's `tuning_spec`, so a test's spec trains with the numbers a run with those settings would.

    RunSpec.from_dict({"run_id": ..., "model": ..., ..., **rl_settings(rounds=2, trial=True)})
"""

from __future__ import annotations

from dataclasses import asdict, is_dataclass
from typing import Any

from domain.runs.run_settings import FIELDS_BY_NAME, RunSettings, learning_rate_for
from jobs.specs import training_spec
from jobs.tune_specs import tuning_spec


def run_settings(trial: bool = False, **settings: Any) -> RunSettings:
    """A run's settings: each one a RunSettings field; a tuning objective's learning rate is its own."""
    objective = str(settings.get("objective") or FIELDS_BY_NAME["objective"].default)
    settings.setdefault("learning_rate", learning_rate_for(objective))
    return RunSettings(kind="trial" if trial else "full", **settings)


def rl_settings(trial: bool = False, price_per_hour: float | None = None, **settings: Any) -> dict[str, Any]:
    """A RunSpec's settings as JSON. `trial`: a trial of the full run these settings describe; `price_per_hour`:
    the GPU's (a trial's cost)."""
    return _json(training_spec(run_settings(trial, **settings), price_per_hour))


def tune_settings(train_examples: int, trial: bool = False, **settings: Any) -> dict[str, Any]:
    """A TuneSpec's settings as JSON, for a version of `train_examples` training examples."""
    return _json(tuning_spec(run_settings(trial, **settings), train_examples))


def split_settings(values: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A test's keyword arguments as (the run's settings, the rest of the spec: rows, reward, deadline ...). The
    spec's `reward` is the trainer's (a RewardSpec), not a setting."""
    named = {key: value for key, value in values.items()
             if (key in FIELDS_BY_NAME and key != "reward") or key in ("trial", "price_per_hour")}
    return named, {key: value for key, value in values.items() if key not in named}


def _json(values: dict[str, Any]) -> dict[str, Any]:
    return {key: asdict(value) if is_dataclass(value) else value for key, value in values.items()}
