"""Cancel a probe while its process samples, for real: the probe job runs `python -m trainer probe` on the tiny model
(jobs/probes.py, watched by jobs/supervisor.py) with far more answers to sample than it can finish before the cancel;
a member cancels it mid-sampling, the supervisor's poll sees it and kills the child's process group, and the probe
ends Cancelled with no score and no answers file.

The prompts are long (about 1,100 tokens each, from an uploaded version): the tiny model answers Math Pairs' short
prompts in a few tokens, and samples all 256 × 32 of them in about a second, too soon to be sure of a cancel landing
mid-sampling; at this length one batch of 16 prompts takes seconds."""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

import pytest
from dataset_versions import uploaded_version

from domain.actors import Actor
from domain.probes.summary import answers_key
from jobs import probes
from tests.jobs.conftest import OWNER, World
from verity.storage import open_storage

pytestmark = pytest.mark.slow

MEMBER = Actor("person", "member@localhost", "Member")
# 64 long prompts × 32 answers of up to 512 tokens: a minute or more on a CPU, so surely still sampling when cancelled
LONG_PROBE = {"prompts": 64, "answers_per_prompt": 32, "max_answer_tokens": 512}


def long_prompts_version(world: World, tmp_path: Path) -> str:
    """A messages version uploaded into `world`'s storage: 64 training examples whose prompts are about 1,100 tokens
    long (the tiny model reads a character a token), each answered by a number."""
    return uploaded_version(world, tmp_path, "long prompts", {
        split: [(f"Speed for {2 * n} km in 2 hours? " + "Think it through. " * 60, str(n)) for n in numbers]
        for split, numbers in {"train": range(1, 65), "validation": range(100, 102)}.items()
    })


def probe_children() -> list[int]:
    """This process's children running `python -m trainer probe` (the supervisor starts them from a job's thread)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue  # it ended while being read
        if parent == os.getpid() and b"trainer" in command and b"probe" in command:
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_until(done, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_a_sampling_probe_cancelled_stops_its_process_and_records_no_score(
    world: World, tiny_model_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    world.settings.models_dir.mkdir(parents=True, exist_ok=True)
    world.settings.tiny_model_dir.symlink_to(tiny_model_dir, target_is_directory=True)  # the Demo project's model
    source = {"kind": "dataset_version", "id": long_prompts_version(world, tmp_path)}
    probe_id = world.verity.create_probe(
        world.org_id, world.project_id, name="too long to finish", source=source,
        reward={"preset": "numeric", "metric": "numeric_accuracy"}, actor=OWNER, role="owner", **LONG_PROBE,
    ).id
    caplog.set_level(logging.INFO, logger="jobs.trainer")
    job = threading.Thread(target=probes.run_probe, args=(world.ctx, probe_id), daemon=True)
    job.start()

    wait_until(lambda: "sampling 64 prompts × 32 answers" in caplog.text, 180, "the child to start sampling")
    (child,) = probe_children()
    assert world.verity.get_probe(None, probe_id).status == "Sampling"
    time.sleep(1.0)  # well into sampling: a score is minutes away
    assert alive(child)

    cancelled_at = time.monotonic()
    world.verity.cancel_probe(world.org_id, probe_id, MEMBER, "member")
    job.join(timeout=30)

    assert not job.is_alive(), "the job did not end after the cancel"
    stopped_in = time.monotonic() - cancelled_at
    # a poll (world.ctx's timing) and at most a SIGTERM's grace before SIGKILL
    assert stopped_in < world.ctx.config.cancel_poll_seconds + world.ctx.config.terminate_grace_seconds + 5
    assert not alive(child) and probe_children() == []
    probe = world.verity.get_probe(None, probe_id)
    assert (probe.status, probe.summary, probe.failure) == ("Cancelled", None, None)
    events = [type(e).__qualname__ for e in world.verity.repository.event_store.get(probe_id)]
    assert events == ["Probe.Saved", "Probe.Sampling", "Probe.Cancelled"]
    assert not open_storage(world.settings).exists(answers_key(str(probe_id)))
