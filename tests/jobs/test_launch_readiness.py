"""Launch readiness for the public GSM8K set: what the worker in the console's process can tell quickly, before a
run that needs the set is queued (jobs/readiness.py). Nothing here reaches the network: an unreachable hub is a
closed port on this machine."""

from __future__ import annotations

import socket

import pytest

from domain.runs.run_settings import RunSettings
from jobs import readiness
from jobs.readiness import gsm8k_unavailable, launch_readiness, needs_public_gsm8k

ADVICE = "Upload GSM8K as a Dataset version, or set VERITY_GSM8K_SOURCE."
GSM8K = {"preset": "verifiable", "metric": "gsm8k", "format_bonus": True}


def gsm8k_run(**settings: object) -> RunSettings:
    return RunSettings(**{"kind": "trial", "dataset_version": None, "objective": "rl", "reward": GSM8K, **settings})


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # nothing listens once the probe closes


@pytest.fixture(autouse=True)
def fresh_answers(monkeypatch):
    monkeypatch.setattr(readiness, "_reached", {})


def test_only_a_gsm8k_run_without_a_version_needs_the_public_set() -> None:
    assert needs_public_gsm8k(gsm8k_run())
    assert not needs_public_gsm8k(gsm8k_run(dataset_version="a-version"))
    math_pairs = gsm8k_run(reward={"preset": "verifiable", "metric": "math_pairs"})
    assert not needs_public_gsm8k(math_pairs)
    assert not needs_public_gsm8k(RunSettings(objective="sft", dataset_version=None))


def test_a_configured_source_that_is_not_there_is_refused_in_words(tmp_path) -> None:
    missing = tmp_path / "gsm8k.jsonl"
    problem = gsm8k_unavailable({"VERITY_GSM8K_SOURCE": str(missing)})
    assert problem == (f"GSM8K can't be loaded on this worker: VERITY_GSM8K_SOURCE names {missing}, which is not "
                       f"there. {ADVICE}")
    missing.write_text("{}\n")
    assert gsm8k_unavailable({"VERITY_GSM8K_SOURCE": str(missing)}) is None  # the worker reads (and checks) it


def test_the_hub_offline_with_no_copy_is_refused_and_a_cached_copy_will_do(tmp_path) -> None:
    env = {"HF_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    problem = gsm8k_unavailable(env)
    assert problem == ("GSM8K can't be loaded on this worker: it works offline (HF_HUB_OFFLINE) and holds no copy of "
                       f"openai/gsm8k. {ADVICE}")
    copy = tmp_path / "datasets" / "openai___gsm8k" / "main"
    copy.mkdir(parents=True)
    assert gsm8k_unavailable(env) is None


def test_a_hub_that_does_not_answer_is_refused_quickly(tmp_path) -> None:
    port = closed_port()
    env = {"HF_HOME": str(tmp_path), "HF_ENDPOINT": f"http://127.0.0.1:{port}"}
    problem = gsm8k_unavailable(env, timeout=1.0)
    assert problem is not None
    assert problem.startswith("GSM8K can't be loaded on this worker: it can't reach 127.0.0.1 to download openai/gsm8k")
    assert problem.endswith(f"and holds no copy of it. {ADVICE}")


def test_only_runs_for_this_process_own_worker_are_checked(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("VERITY_GSM8K_SOURCE", str(tmp_path / "nowhere.jsonl"))
    check = launch_readiness(["local"])
    assert check(gsm8k_run()).startswith("GSM8K can't be loaded on this worker")
    elsewhere = gsm8k_run(provider="h100-pool")  # its workers are other machines, with their own environment
    assert check(elsewhere) is None
    assert launch_readiness([])(gsm8k_run()) is None  # a broker: no worker in this process
