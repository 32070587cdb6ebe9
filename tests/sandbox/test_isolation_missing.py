"""A worker that cannot wall a metric off refuses to run it, naming the missing layer, unless whoever runs the
worker accepted weaker isolation with VERITY_SANDBOX_ISOLATION=weaker."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from trainer_specs import rl_settings

from domain.rewards.types import AnswerScore
from trainer.loop import run
from trainer.sandbox import IsolationMissing, SandboxedMetric
from trainer.spec import RunSpec

EXACT_MATCH = "def score(answer, reference):\n    return float(answer == reference)\n"
# What Debian's bwrap prints on a host whose kernel refuses it namespaces. bubblewrap is a third party whose
# refusal this machine cannot produce (it allows namespaces), so this stand-in says it instead.
REFUSING_BUBBLEWRAP = """#!/bin/sh
echo "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged \
user namespaces." >&2
exit 1
"""


@pytest.fixture
def no_bubblewrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A worker's PATH where bubblewrap is not installed."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("VERITY_SANDBOX_ISOLATION", raising=False)


@pytest.fixture
def refusing_bubblewrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "bwrap").write_text(REFUSING_BUBBLEWRAP)
    (folder / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
    monkeypatch.delenv("VERITY_SANDBOX_ISOLATION", raising=False)


def test_without_bubblewrap_the_metric_does_not_run(no_bubblewrap) -> None:
    with pytest.raises(IsolationMissing) as refused:
        SandboxedMetric(EXACT_MATCH)
    assert str(refused.value) == (
        "The custom-metric sandbox cannot wall the metric off on this worker: a root of its own (bubblewrap) is "
        "missing (bubblewrap (bwrap) is not installed). Install bubblewrap (Debian's bwrap) on the worker and "
        "allow it namespaces, or set VERITY_SANDBOX_ISOLATION=weaker on the worker to accept weaker isolation."
    )


def test_a_host_that_forbids_namespaces_is_named_in_the_refusal(refusing_bubblewrap) -> None:
    with pytest.raises(IsolationMissing) as refused:
        SandboxedMetric(EXACT_MATCH)
    assert "a root of its own (bubblewrap) is missing (bubblewrap could not start the worker: bwrap: No " in str(
        refused.value
    )
    assert "kernel does not allow non-privileged user namespaces" in str(refused.value)


@pytest.mark.parametrize("host", ["no_bubblewrap", "refusing_bubblewrap"])
def test_weaker_isolation_runs_the_metric_when_accepted_and_says_what_is_missing(
    host, request, monkeypatch: pytest.MonkeyPatch
) -> None:
    request.getfixturevalue(host)
    monkeypatch.setenv("VERITY_SANDBOX_ISOLATION", "weaker")
    with SandboxedMetric(EXACT_MATCH) as metric:
        assert metric.score_batch(["4", "5"], ["4", "4"]) == [AnswerScore(1.0), AnswerScore(0.0)]
        layers = metric.isolation_layers
        host_folder = metric._launch.host_folder  # the plain worker's folder on the host's disk
    assert layers["file_system"].startswith("the host's /etc/passwd")
    assert layers["processes"].endswith("processes can be seen")
    assert layers["resource_limits"] == layers["audit_hook"] == "on"
    assert not Path(host_folder).exists()  # removed with the worker


def test_a_run_whose_metric_cannot_be_walled_off_fails_before_the_model_loads(no_bubblewrap, tmp_path) -> None:
    spec = RunSpec.from_dict(
        {
            "run_id": "run-1",
            "model": {"path_or_id": str(tmp_path / "no-model-here")},  # loading it would fail in other words
            "reward": {
                "config": {"preset": "qa", "metric": "custom.m-1"},
                "custom_metric_source": EXACT_MATCH,
                "custom_metric_name": "exact",
                "custom_metric_version": "1",
            },
            "train_rows": [{"prompt": [{"role": "user", "content": "1+1?"}], "reference": "2"}],
            "validation_rows": [{"prompt": [{"role": "user", "content": "2+2?"}], "reference": "4"}],
            "storage": {"location": str(tmp_path / "storage")},
            "deadline": 4_102_444_800,
            **rl_settings(),
        }
    )
    records: list = []
    assert not run(spec, emit=records.append)
    assert [record.type for record in records] == ["failed"]
    assert records[0].message.startswith("The custom-metric sandbox cannot wall the metric off on this worker: ")
    assert shutil.which("bwrap") is None  # the PATH the run saw
