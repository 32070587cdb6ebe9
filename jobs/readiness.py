"""Launch readiness: what the worker that would train a run can tell before the run is queued.

A `gsm8k` run with no Dataset version trains on the public GSM8K set, which the worker loads when the run starts
(jobs/public_datasets.py). Where it can't, the run would fail after it was queued; a worker in the console's own
process (the embedded default's, serving `local`) says so at Launch instead, from what it can know quickly:

- VERITY_GSM8K_SOURCE names a file or folder: it must be there;
- else a hub id (`openai/gsm8k`): a copy in the Hugging Face caches will do; with none, the hub must answer a TCP
  connection within a couple of seconds (HF_HUB_OFFLINE or HF_DATASETS_OFFLINE means it won't be asked). The
  answer is kept a minute, so a page never waits on the network twice in a row.

A run for a provider whose workers are other processes (a broker, another queue) is not checked here: their
environment is theirs, and a worker that can't load the set still fails the run in words.
"""

from __future__ import annotations

import os
import re
import socket
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from urllib.parse import urlparse

from domain.runs import objectives
from domain.runs.run_settings import RunSettings
from jobs.broker import provider_queue
from jobs.public_datasets import GSM8K_SOURCE_VARIABLE, gsm8k_source

GSM8K_NOT_HERE = (
    "GSM8K can't be loaded on this worker: {reason}. Upload GSM8K as a Dataset version, or set VERITY_GSM8K_SOURCE."
)
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")
REACH_SECONDS = 2.0  # at most this long on Launch, once a minute
REMEMBER_SECONDS = 60.0
_reached: dict[tuple[str, int], tuple[float, str | None]] = {}  # (host, port) → (when asked, why not or None)


def needs_public_gsm8k(settings: RunSettings) -> bool:
    """An RL run whose reward is GSM8K accuracy and that names no Dataset version (001: "uses the built-in
    dataset"), as jobs/specs.py builds it."""
    if not objectives.is_rl(settings.objective) or settings.dataset_version:
        return False
    reward = settings.reward or {}
    return reward.get("preset") == "verifiable" and reward.get("metric") == "gsm8k"


def gsm8k_unavailable(environ: Mapping[str, str] | None = None, *, timeout: float = REACH_SECONDS) -> str | None:
    """Why this process could not load the public GSM8K set, in the words a Launch refusal shows, or None."""
    env = os.environ if environ is None else environ
    source = gsm8k_source(dict(env))
    path = Path(source).expanduser()
    if path.exists():
        return None
    if not HUB_ID.match(source):  # a path that is not there (a hub id looks like "owner/name")
        return GSM8K_NOT_HERE.format(reason=f"{GSM8K_SOURCE_VARIABLE} names {source}, which is not there")
    if _cached(source, env):
        return None
    if _flag(env, "HF_HUB_OFFLINE") or _flag(env, "HF_DATASETS_OFFLINE"):
        reason = f"it works offline (HF_HUB_OFFLINE) and holds no copy of {source}"
        return GSM8K_NOT_HERE.format(reason=reason)
    endpoint = urlparse(env.get("HF_ENDPOINT", "").strip() or "https://huggingface.co")
    host = endpoint.hostname or "huggingface.co"
    port = endpoint.port or (80 if endpoint.scheme == "http" else 443)
    unreachable = _unreachable(host, port, timeout)
    if unreachable is None:
        return None
    return GSM8K_NOT_HERE.format(reason=f"it can't reach {host} to download {source} ({unreachable}), and holds "
                                        "no copy of it")


def _flag(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _cache_folders(env: Mapping[str, str]) -> Iterable[Path]:
    home = Path(env.get("HF_HOME") or Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "huggingface")
    yield Path(env.get("HF_DATASETS_CACHE") or home / "datasets").expanduser()
    yield Path(env.get("HF_HUB_CACHE") or env.get("HUGGINGFACE_HUB_CACHE") or home / "hub").expanduser()


def _cached(source: str, env: Mapping[str, str]) -> bool:
    """A copy `datasets` made (owner___name) or the hub's own download (datasets--owner--name)."""
    datasets_cache, hub_cache = _cache_folders(env)
    names = [datasets_cache / source.replace("/", "___"), hub_cache / f"datasets--{source.replace('/', '--')}"]
    return any(name.is_dir() and any(name.iterdir()) for name in names)


def _unreachable(host: str, port: int, timeout: float) -> str | None:
    now = time.monotonic()
    known = _reached.get((host, port))
    if known is not None and now - known[0] < REMEMBER_SECONDS:
        return known[1]
    try:
        with socket.create_connection((host, port), timeout=timeout):
            why = None
    except TimeoutError:
        why = f"no answer in {timeout:g} s"
    except OSError as error:
        why = error.strerror or type(error).__name__
    _reached[(host, port)] = (now, why)
    return why


def launch_readiness(queues_here: Iterable[str]) -> Callable[[RunSettings], str | None]:
    """The check the console runs at Launch (and Retry) for a run's saved settings: the words that refuse it, or
    None. Only runs for a queue this process's own worker serves are checked."""
    served = frozenset(queues_here)

    def problem(settings: RunSettings) -> str | None:
        try:
            if provider_queue(settings.provider) not in served:
                return None
        except ValueError:
            return None
        if needs_public_gsm8k(settings):
            return gsm8k_unavailable()
        return None

    return problem
