"""Two organizations on one embedded console, with the data folder outside /tmp: organization A's custom metric
hunts for organization B's secret (B's uploaded rows, and a key in the worker's environment) in the data folder,
the models, the project and every process it can see, and scores 1 wherever it finds it. Through the public API,
A's run trains with that metric as its reward; every answer scores 0, and neither secret reaches A's results,
rollouts, events, pages or logs."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import TYPE_CHECKING
from uuid import UUID

import pytest

from domain.actors import Actor

if TYPE_CHECKING:
    from conftest import Site

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parents[2]
HUNTER = Actor("person", "owner@localhost", "owner@localhost")

# The secrets match this pattern; the metric's source holds only the pattern, never a secret.
SPY_METRIC = r'''
import os
import re

ROOTS = {roots!r}
SECRET = re.compile(rb"ORGB-SECRET-[0-9a-f]{{32}}")
SKIPPED = {{".venv", ".git", "node_modules", "__pycache__"}}


def found_in_files():
    for root in ROOTS:
        for folder, subfolders, files in os.walk(root):
            subfolders[:] = [name for name in subfolders if name not in SKIPPED]
            for name in files:
                try:
                    with open(os.path.join(folder, name), "rb") as file:
                        if SECRET.search(file.read(1 << 22)):
                            return True
                except OSError:
                    pass
    return False


def found_in_processes():
    if any(SECRET.search(value.encode()) for value in os.environ.values()):
        return True
    for entry in os.listdir("/proc"):
        for part in ("environ", "cmdline") if entry.isdigit() else ():
            try:
                with open(f"/proc/{{entry}}/{{part}}", "rb") as file:
                    if SECRET.search(file.read()):
                        return True
            except OSError:
                pass
    return False


FOUND = []


def score(answer, reference):
    if not FOUND:
        FOUND.append(found_in_files() or found_in_processes())
    return 1.0 if FOUND[0] else 0.0
'''


def _secret() -> str:
    return f"ORGB-SECRET-{uuid.uuid4().hex}"


def _rows_with(secret: str) -> bytes:
    """Organization B's rows, whose references hold its secret."""
    return "".join(
        json.dumps({"messages": [{"role": "user", "content": f"What is {n}+1?"},
                                 {"role": "assistant", "content": f"{secret} {n + 1}"}]}) + "\n"
        for n in range(8)
    ).encode()


def _everything_a_sees(site: Site, run_id: UUID) -> str:
    """A's whole view: the run and its timeline through the API, the event feed, the run page and its parts."""
    seen = [site.client.get(f"/api/runs/{run_id}").text, site.client.get(f"/api/runs/{run_id}/events").text,
            site.client.get(f"/api/runs/{run_id}/steps").text]
    after = 0
    while True:
        page = site.client.get("/api/events", params={"after": after, "limit": 1000}).json()
        seen.append(json.dumps(page))
        if page["next_after"] == after:
            break
        after = page["next_after"]
    seen.append(site.client.get(f"/runs/{run_id}").text)
    for part in ("logs", "rounds", "summary", "samples"):
        seen.append(site.client.get(f"/runs/{run_id}/{part}", headers={"HX-Request": "true"}).text)
    return "\n".join(seen)


def test_a_metric_of_one_organization_finds_nothing_of_another(
    embedded_outside_tmp: Site, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, capfd
) -> None:
    site = embedded_outside_tmp
    data_folder = site.settings.data_dir
    assert not str(data_folder).startswith("/tmp/")
    rows_secret, environment_secret = _secret(), _secret()
    monkeypatch.setenv("VERITY_PARTNER_TOKEN", environment_secret)  # the worker's own environment

    beta = site.app_verity.create_organization("Beta", "pro", HUNTER).id
    beta_token = site.app_verity.issue_token(beta, "beta uploads", "owner", HUNTER, "owner").text
    site.upload("payroll", _rows_with(rows_secret), _rows_with(rows_secret), token=beta_token)

    roots = [str(data_folder), str(site.settings.models_dir), str(PROJECT)]
    spy = SPY_METRIC.format(roots=roots)
    # Run here, in the worker's process, the metric finds both secrets ...
    here: dict = {}
    exec(spy, here)
    assert here["found_in_files"]() and here["found_in_processes"]()

    # ... registered by organization A and used as its run's reward, it finds neither.
    metric = site.client.post("/api/custom-metrics", json={"name": "spy", "source": spy})
    assert metric.status_code == 201, metric.text
    reward = {"preset": "qa", "metric": metric.json()["reward_metric"], "custom_metric": metric.json()["id"]}
    run_id = site.save(rounds=2, reward=reward)
    site.launch(run_id)
    run = site.wait_ended(run_id)

    assert run["state"] == "failed"  # every answer of every round scored the same: 0
    assert run["failure"].startswith("RL found no learning signal in rounds 1-2: every answer to every prompt "
                                     "scored the same (0")
    rollouts = sorted((site.settings.local_storage_dir / "runs" / str(run_id) / "rollouts").glob("round-*.jsonl"))
    assert [path.name for path in rollouts] == ["round-001.jsonl", "round-002.jsonl"]
    rewards = [answer["reward"] for path in rollouts for line in path.read_text().splitlines()
               for answer in json.loads(line)["answers"]]
    assert len(rewards) == 2 * 8 * 4 and set(rewards) == {0.0}

    everything = "\n".join([
        _everything_a_sees(site, run_id),
        *(path.read_text() for path in rollouts),
        caplog.text,
        *capfd.readouterr(),
    ])
    for secret in (rows_secret, environment_secret):
        assert secret not in everything
