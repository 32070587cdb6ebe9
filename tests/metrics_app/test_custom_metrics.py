"""A person manages the organization's custom metrics and uses a version as a run's reward."""

from __future__ import annotations

import html
from uuid import UUID

from app.metrics.choices import custom_reward_choices

EXACT_YEAR = "def score(answer, reference):\n    return 1.0 if reference in answer else 0.0\n"
HALF = "def score(answer, reference):\n    return 0.5\n"
EMPTY_STATE = "No custom metrics yet. Upload a Python metric to use it as the reward."


def trial_with(version_id: str) -> dict:
    reward = {"preset": "qa", "metric": f"custom.{version_id}"}
    return {"name": "years", "kind": "trial", "training": {"rl": {"reward": reward}}}


def test_with_none_yet_manage_metrics_says_so(console):
    page = console.client.get("/metrics")
    assert page.status_code == 200
    assert EMPTY_STATE in page.text
    assert console.client.get("/api/custom-metrics").json() == []


def test_register_a_metric_on_the_page_then_edit_it_into_a_new_version(console):
    registered = console.client.post("/metrics", files={"name": (None, "exact_year"), "source": (None, EXACT_YEAR)},
                                     follow_redirects=False)  # fmt: skip
    assert registered.status_code == 303, registered.text
    detail = console.client.get(registered.headers["location"])
    assert "exact_year" in detail.text and "v1" in detail.text and "Save as v2" in detail.text
    assert EMPTY_STATE not in console.client.get("/metrics").text

    metric_id = registered.headers["location"].rsplit("/", 1)[-1]
    edited = console.client.post(f"/metrics/{metric_id}/versions", files={"source_file": ("half.py", HALF.encode())},
                                 follow_redirects=False)  # fmt: skip
    assert edited.status_code == 303
    [metric] = console.client.get("/api/custom-metrics").json()
    assert [(v["label"], v["source"]) for v in metric["versions"]] == [
        ("exact_year (v2)", HALF),
        ("exact_year (v1)", EXACT_YEAR),
    ]


def test_a_metric_that_does_not_compile_or_lacks_score_is_refused_before_anything_is_saved(console):
    log = console.log_position()
    no_score = console.client.post(
        "/api/custom-metrics", json={"name": "m", "source": "def grade(a, r):\n  return 1\n"}
    )
    assert no_score.status_code == 422
    assert no_score.json()["errors"] == {"source": "The metric defines no score(answer, reference) function."}

    broken = console.client.post("/metrics", files={"name": (None, "m"), "source": (None, "def score(a, r)\n")})
    assert broken.status_code == 422
    assert "The metric does not compile: line 1: expected &#39;:&#39;." in broken.text
    assert EMPTY_STATE in broken.text

    not_utf8 = console.client.post("/metrics", files={"name": (None, "m"), "source_file": ("m.py", b"# caf\xe9\n")})
    assert "The file is not UTF-8 text" in html.unescape(not_utf8.text)
    assert console.log_position() == log


def test_an_archived_version_is_refused_for_a_new_run_and_a_saved_run_keeps_its_version(console):
    v1 = console.client.post("/api/custom-metrics", json={"name": "exact_year", "source": EXACT_YEAR}).json()
    assert v1["reward_metric"] == f"custom.{v1['id']}"
    saved = console.client.post("/api/runs", json=trial_with(v1["id"]))
    assert saved.status_code == 201, saved.text
    run_id = saved.json()["run"]["id"]
    v2 = console.client.post(f"/api/custom-metrics/{v1['metric_id']}/versions", json={"source": HALF}).json()
    assert v2["number"] == 2

    choices = custom_reward_choices(console.read_models, console.org_id)
    assert choices == [(f"custom.{v2['id']}", "exact_year (v2) · custom metric"),
                       (f"custom.{v1['id']}", "exact_year (v1) · custom metric")]  # fmt: skip

    archive = console.client.post(f"/metrics/versions/{v1['id']}/archive", follow_redirects=False)
    assert archive.status_code == 303
    assert "archived" in console.client.get(archive.headers["location"]).text
    assert custom_reward_choices(console.read_models, console.org_id) == [
        (f"custom.{v2['id']}", "exact_year (v2) · custom metric")
    ]

    refused = console.client.post("/api/runs", json=trial_with(v1["id"]))
    assert refused.status_code == 422
    assert refused.json()["errors"] == {
        "reward": "exact_year (v1) is archived. Choose an active version: an archived one is refused for a new run."
    }
    assert console.client.post("/api/runs", json=trial_with(v2["id"])).status_code == 201
    kept = console.client.get(f"/api/runs/{run_id}").json()["settings"]["training"]["rl"]["reward"]
    assert kept["custom_metric"] == v1["id"]
    assert console.verity.get_custom_metric_version(None, UUID(v1["id"])).source == EXACT_YEAR  # what the jobs read

    again = console.client.post(f"/api/custom-metric-versions/{v1['id']}/archive")
    assert again.status_code == 409 and again.json()["detail"] == "exact_year (v1) is already archived."


def test_a_reward_naming_another_organizations_or_no_version_is_refused(console):
    refused = console.client.post("/api/runs", json=trial_with("7b1e2f9c-0000-4000-8000-000000000000"))
    assert refused.json()["errors"] == {
        "reward": "There is no custom metric version 7b1e2f9c-0000-4000-8000-000000000000 in this organization."
    }


def test_the_configure_form_lists_active_custom_metrics_after_the_built_in_ones(console):
    v1 = console.client.post("/api/custom-metrics", json={"name": "exact_year", "source": EXACT_YEAR}).json()
    form = html.unescape(console.client.get("/runs/new").text)
    built_in, custom = form.index(">Boxed-answer accuracy<"), form.index(">exact_year (v1) · custom metric<")
    assert built_in < custom
    console.client.post(f"/api/custom-metric-versions/{v1['id']}/archive")
    assert "exact_year (v1)" not in console.client.get("/runs/new").text
