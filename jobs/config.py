"""How the jobs keep time and who this worker is, read once from the environment.

Every number has a production default; tests shrink them through the same variables.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

CONTROL_QUEUE = "verity"  # cancels and reconciles: never behind a training run
DEFAULT_PROVIDER = "local"  # this machine's own worker; always exists


def _float(env: dict[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    return float(raw) if raw else default


@dataclass(frozen=True)
class JobsConfig:
    heartbeat_seconds: float = 5.0  # how often a supervising worker says it is alive
    stale_after_seconds: float = 60.0  # a run whose worker was silent this long is an orphan
    reconcile_every_seconds: float = 30.0  # how often each process looks for orphans
    cancel_poll_seconds: float = 1.0  # how often a supervisor reads the run to see a cancel
    watchdog_grace_seconds: float = 60.0  # how long past the time limit a trainer may live before it is killed
    terminate_grace_seconds: float = 5.0  # between SIGTERM and SIGKILL of the trainer's process group
    requeue_after_seconds: float = 1800.0  # a Queued run whose message is this old is sent again
    time_limit_scale: float = 1.0  # real seconds per second of a Time limit; only tests shrink it
    worker_gpu: str = "CPU"  # what this worker declares it trains on
    worker_price_per_hour: float | None = None  # its price, for a trial's cost estimate and the Price limit

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> JobsConfig:
        env = dict(os.environ if environ is None else environ)
        price = env.get("VERITY_WORKER_PRICE_PER_HOUR", "").strip()
        defaults = cls()
        return cls(
            heartbeat_seconds=_float(env, "VERITY_HEARTBEAT_SECONDS", defaults.heartbeat_seconds),
            stale_after_seconds=_float(env, "VERITY_STALE_AFTER_SECONDS", defaults.stale_after_seconds),
            reconcile_every_seconds=_float(env, "VERITY_RECONCILE_EVERY_SECONDS", defaults.reconcile_every_seconds),
            cancel_poll_seconds=_float(env, "VERITY_CANCEL_POLL_SECONDS", defaults.cancel_poll_seconds),
            watchdog_grace_seconds=_float(env, "VERITY_WATCHDOG_GRACE_SECONDS", defaults.watchdog_grace_seconds),
            terminate_grace_seconds=_float(env, "VERITY_TERMINATE_GRACE_SECONDS", defaults.terminate_grace_seconds),
            requeue_after_seconds=_float(env, "VERITY_REQUEUE_AFTER_SECONDS", defaults.requeue_after_seconds),
            time_limit_scale=_float(env, "VERITY_TIME_LIMIT_SCALE", defaults.time_limit_scale),
            worker_gpu=env.get("VERITY_WORKER_GPU", "").strip() or _detect_gpu(),
            worker_price_per_hour=float(price) if price else None,
        )


def _detect_gpu() -> str:
    """The GPU's name from nvidia-smi when there is one; never imports torch (the web process stays light)."""
    import shutil
    import subprocess

    if shutil.which("nvidia-smi") is None:
        return "CPU"
    try:
        output = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "CPU"
    return output.splitlines()[0] if output else "CPU"
