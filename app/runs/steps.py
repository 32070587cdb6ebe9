"""The run page of an SFT or DPO run: its optimizer steps as a loss chart and a table (run_steps, newest first).

SFT and DPO log steps where RL scores rounds, so their page shows Loss and Validation loss by step in place of
the Reward chart, Rounds and Samples.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from projections.rows import RunDetail, StepRow

LOSS_COLOR, VALIDATION_COLOR = "#b35900", "#1a7f37"


def objective_of(run: RunDetail) -> str:
    return run.run_settings.objective


def loss_chart(steps: Sequence[StepRow]) -> dict[str, Any]:
    """Training loss at every step; validation loss at the steps that ended an epoch (gaps elsewhere).

    >>> from uuid import uuid4
    >>> rows = [StepRow(uuid4(), 2, 2, 1.0, 1.5, 1.4, 2.0, ""), StepRow(uuid4(), 1, 2, 0.5, 2.0, None, 1.0, "")]
    >>> chart = loss_chart(rows)
    >>> chart["x"], [s["y"] for s in chart["series"]]
    ([1, 2], [[2.0, 1.5], [None, 1.4]])
    """
    ordered = sorted(steps, key=lambda s: s.step)
    return {
        "x": [s.step for s in ordered],
        "x_title": "Step",
        "series": [
            {"name": "Loss", "y": [s.loss for s in ordered], "color": LOSS_COLOR},
            {"name": "Validation loss", "y": [s.validation_loss for s in ordered], "color": VALIDATION_COLOR},
        ],
        "percent": False,
        "label": "Training and validation loss by step",
    }
