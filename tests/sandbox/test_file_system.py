"""The metric's worker has a root of its own: nothing of the host's files is there to list, read or write, and no
address of the host answers it. Each probe is first run in the test's own process, to show it would succeed
there; the same probe in the sandbox fails."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from domain.rewards.types import AnswerScore

SECRET = "FAKE-SECRET-of-organization-B-7f3a"
PROJECT = Path(__file__).resolve().parents[2]
ZERO = AnswerScore(value=0.0)

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="the sandbox's file system needs bubblewrap")


@pytest.fixture
def loose_data_folder() -> Iterator[Path]:
    """A data folder outside /tmp, with the loose modes an older install left (0755 folders, 0644 files), so that
    only the sandbox's own root stands between a metric and its files."""
    folder = Path(tempfile.mkdtemp(prefix="verity-data-", dir="/var/tmp"))
    folder.chmod(0o755)
    (folder / "storage" / "datasets").mkdir(parents=True)
    for path in (folder / "storage", folder / "storage" / "datasets"):
        path.chmod(0o755)
    rows = folder / "storage" / "datasets" / "rows.jsonl"
    rows.write_text(f'{{"messages": [{{"role": "assistant", "content": "{SECRET}"}}]}}\n')
    rows.chmod(0o644)
    yield folder
    shutil.rmtree(folder)


def _host_address() -> str | None:
    """An address of this machine other than loopback, where one exists."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))  # no packet is sent: it only picks the outgoing address
            address = probe.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def test_the_metric_sees_the_sandbox_and_nothing_else_of_the_host(hostile_metric) -> None:
    assert {layer: hostile_metric.isolation_layers[layer] for layer in ("file_system", "network", "processes")} == {
        "file_system": "on",
        "network": "on",
        "processes": "on",
    }


def test_the_metric_can_neither_list_nor_read_the_data_folder(loose_data_folder, hostile_metric, run_here) -> None:
    rows = loose_data_folder / "storage" / "datasets" / "rows.jsonl"
    probes = [f"list:{loose_data_folder}", f"file:{rows}"]
    assert [run_here(probe, SECRET) for probe in probes] == [1.0, 1.0]
    assert hostile_metric.score_batch(probes, [SECRET] * 2) == [ZERO] * 2


def test_the_metric_can_neither_list_nor_read_the_models_or_the_project(tiny_model_dir, hostile_metric, run_here):
    config = tiny_model_dir / "config.json"
    probes = [f"list:{tiny_model_dir}", f"file:{config}", f"list:{PROJECT}", f"file:{PROJECT / 'README.md'}"]
    references = ["", "hidden_size", "", "Verity"]
    assert [run_here(probe, reference) for probe, reference in zip(probes, references, strict=True)] == [1.0] * 4
    assert hostile_metric.score_batch(probes, references) == [ZERO] * 4


@pytest.mark.skipif(not os.access("/etc/shadow", os.R_OK), reason="the test's own user cannot read /etc/shadow")
def test_the_metric_cannot_read_the_hosts_secrets(hostile_metric, run_here) -> None:
    probes = ["file:/etc/shadow", "file:/etc/passwd", "list:/home"]
    assert [run_here(probe, "root:") for probe in probes[:2]] == [1.0] * 2
    assert hostile_metric.score_batch(probes, ["root:", "root:", ""]) == [ZERO] * 3


def test_the_metric_cannot_write_outside_its_scratch(loose_data_folder, hostile_metric) -> None:
    targets = [loose_data_folder / "planted", PROJECT / "planted", Path("/usr/lib/planted"), Path("/planted")]
    graded = hostile_metric.grade([f"write:{target}" for target in targets], [""] * len(targets))
    assert [g.score for g in graded] == [AnswerScore.failed("execution")] * len(targets)
    assert all(g.detail.split(" ")[0] in ("FileNotFoundError", "PermissionError", "OSError") for g in graded)
    assert not any(target.exists() for target in targets)


def test_no_address_of_the_host_answers_the_metric(hostile_metric, run_here) -> None:
    address = _host_address()
    if address is None:
        pytest.skip("this machine has no address but loopback")
    with socket.create_server(("0.0.0.0", 0)) as server:
        port = server.getsockname()[1]
        assert run_here(f"raw_socket_to:{address},{port}", "") == 1.0
        graded = hostile_metric.score_batch([f"raw_socket_to:{address},{port}", f"raw_socket:{port}"], ["", ""])
    assert graded == [ZERO, ZERO]
