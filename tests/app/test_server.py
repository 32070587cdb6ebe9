"""`verity serve` on the embedded default: a new data folder gets its schema, the Default organization and the
Demo project, the projections follow the log in the background, and the console answers."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx

if TYPE_CHECKING:
    from conftest import Served

MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs"}


def test_verity_serve_starts_the_console_on_a_fresh_data_folder(served: Served) -> None:
    assert served.email == "owner@localhost" and len(served.password) >= 16  # the first owner, told once
    assert httpx.get(f"{served.url}/runs").status_code == 303  # nobody is signed in
    runs = httpx.get(f"{served.url}/api/runs", headers=served.api)
    assert runs.status_code == 200 and runs.json() == []

    body = {"name": "served", "kind": "trial", "training": {"rl": {"reward": MATH_PAIRS}}}
    saved = httpx.post(f"{served.url}/api/runs", json=body, headers=served.api)
    assert saved.status_code == 201, saved.text
    listed = httpx.get(f"{served.url}/api/runs", headers=served.api).json()
    assert [run["name"] for run in listed] == ["served"]  # the server's own runner projected the run
    assert listed[0]["project_id"]  # the Demo project is there to train
