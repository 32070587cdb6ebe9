"""The web process never imports the model stack: `verity serve` with torch, transformers, peft, TRL, datasets,
tokenizers, vLLM and bitsandbytes refused at import serves the console and trains a run to its end (the trainer is
a child process of its own), so a web-only install (`pip install '.[web]'`) carries none of them."""

from __future__ import annotations

import time
from pathlib import Path

import consoles
import httpx
import pytest

pytestmark = pytest.mark.slow

# Installed in `verity serve` alone (sys.orig_argv), not in the trainer or sandbox processes it starts.
REFUSE_THE_MODEL_STACK = '''
import sys

HEAVY = {"torch", "transformers", "peft", "trl", "datasets", "tokenizers", "vllm", "bitsandbytes"}


class RefuseTheModelStack:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in HEAVY:
            raise ImportError(f"the web process imported {name}")
        return None


if "verity.cli" in sys.orig_argv and "serve" in sys.orig_argv:
    sys.meta_path.insert(0, RefuseTheModelStack())
    with open(__file__ + ".installed", "w") as marker:  # so the test knows the refusal was in force
        marker.write("serve")
'''
RUN = {
    "name": "trained beside a light web process",
    "training": {
        "rl": {"rounds": 2, "prompts_per_round": 8, "answers_per_prompt": 4, "max_answer_tokens": 16,
               "reward": {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 16}},
        "advanced": {"learning_rate": 5e-4, "micro_batch_size": 32, "training_window": 128},
    },
}


def test_the_console_serves_and_a_run_trains_without_the_model_stack_in_the_web_process(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(REFUSE_THE_MODEL_STACK)
    data_dir = tmp_path / "data"
    (data_dir / "models").mkdir(parents=True)
    (data_dir / "models" / "tiny-math").symlink_to(tiny_model_dir, target_is_directory=True)
    env = {**consoles.console_env(data_dir), "PYTHONPATH": str(hooks)}

    with consoles.served_console(data_dir, env) as console:
        for page in ("/runs", "/runs/new", "/evaluations/new", "/loops/new", "/metrics"):
            signed_out = httpx.get(f"{console.url}{page}", follow_redirects=True, timeout=30)
            assert signed_out.status_code == 200, page
        saved = httpx.post(f"{console.url}/api/runs", json=RUN, headers=console.api, timeout=30)
        assert saved.status_code == 201, saved.text
        run_id = saved.json()["run"]["id"]
        assert httpx.post(f"{console.url}/api/runs/{run_id}/launch", headers=console.api, timeout=30).is_success
        deadline = time.monotonic() + 180
        while (run := httpx.get(f"{console.url}/api/runs/{run_id}", headers=console.api, timeout=10).json())[
            "state"
        ] not in ("completed", "failed") and time.monotonic() < deadline:
            time.sleep(0.5)
        log = (data_dir.parent / "serve.log").read_text()

    assert (hooks / "sitecustomize.py.installed").read_text() == "serve"
    assert run["state"] == "completed", run.get("failure")
    assert "the web process imported" not in log
