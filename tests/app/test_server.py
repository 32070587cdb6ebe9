"""`verity serve` on the embedded default: a new data folder gets its schema, the Default organization and the
Demo project, the projections follow the log in the background, and the console answers."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx

if TYPE_CHECKING:
    from conftest import Served

MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs"}


def test_verity_serve_starts_the_console_on_a_fresh_data_folder(served: Served) -> None:
    runs = httpx.get(f"{served.url}/runs")
    assert runs.status_code == 200 and "No runs yet." in runs.text
    assert "Demo" in httpx.get(f"{served.url}/runs/new").text  # the Demo project is there to train

    body = {"name": "served", "kind": "trial", "training": {"rl": {"reward": MATH_PAIRS}}}
    saved = httpx.post(f"{served.url}/api/runs", json=body)
    assert saved.status_code == 201, saved.text
    assert "served" in httpx.get(f"{served.url}/runs").text  # the server's own runner projected the run
