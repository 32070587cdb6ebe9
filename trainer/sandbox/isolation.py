"""How the sandbox worker is walled off from the host: bubblewrap gives it a root, network and process table of
its own; this module builds that command and judges the layers the worker reports from inside.

The worker's file system is a fresh root holding only what Python needs to run (the shared libraries, the
interpreter's own prefix, read-only), the worker's two scripts at /sandbox, and size-capped tmpfs folders
(/scratch for the batches, /tmp and /dev/shm). Nothing else of the host is there: not the data folder, the models,
the storage, the project, /home or /etc. A host where bubblewrap is missing or may not create namespaces fails the
metric before the model loads, naming the missing layer, unless whoever runs the worker set
VERITY_SANDBOX_ISOLATION=weaker (then rlimits, the user drop and the audit hook remain; see README.md).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

RUNTIME_FOLDER = Path(__file__).parent / "runtime"
SANDBOX_FOLDER = "/sandbox"  # where the worker's scripts appear inside
SCRATCH_FOLDER = "/scratch"  # the batches' private folders live under it, inside
ISOLATION_SETTING = "VERITY_SANDBOX_ISOLATION"
WEAKER = "weaker"
BUBBLEWRAP = "bwrap"

# Layers without which a metric of one organization could read what is not its own. The others (resource
# limits, user drop, audit hook) run inside the worker in either mode.
REQUIRED_LAYERS = {
    "file_system": "a root of its own (bubblewrap)",
    "network": "no network (a network namespace)",
    "processes": "no view of other processes (a PID namespace)",
}
ON = "on"

# What the worker keeps once it is root inside: making batch folders for the unprivileged user, dropping to it,
# cleaning up after it and ending its processes. The metric's own process gives all of these up.
WORKER_CAPABILITIES = ("CAP_SETUID", "CAP_SETGID", "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_KILL")

ENVIRONMENT = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}


class IsolationMissing(RuntimeError):
    """The worker could not be walled off as required; the message names the layer, in words."""


@dataclass(frozen=True)
class WorkerLaunch:
    """How to start one sandbox worker: its command line, environment and the folders it works in."""

    command: list[str]
    environment: dict[str, str]
    scratch_root: str  # as the worker sees it
    host_folder: str | None  # a host folder to remove after the worker, when it works on the host's disk
    isolated: bool


def weaker_isolation_accepted(environ: dict[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return env.get(ISOLATION_SETTING, "").strip().lower() == WEAKER


def _runtime_paths() -> list[Path]:
    """The host paths the interpreter needs, read-only: shared libraries, its prefix, its binary, ld.so's cache."""
    interpreter = Path(os.path.realpath(sys.executable))
    candidates = [Path("/usr/lib"), Path("/usr/lib64"), Path("/usr/lib32"), Path("/etc/ld.so.cache")]
    candidates += [Path(sys.base_prefix), interpreter]
    for top in ("/lib", "/lib64", "/lib32"):  # a system without merged /usr keeps its libraries there
        if Path(top).is_dir() and not Path(top).is_symlink():
            candidates.append(Path(top))
    kept: list[Path] = []
    for path in sorted({Path(os.path.realpath(p)) for p in candidates if p.exists()}, key=lambda p: len(p.parts)):
        if not any(path.is_relative_to(parent) for parent in kept):
            kept.append(path)
    return kept


def _ancestors(paths: list[Path]) -> list[str]:
    """Every folder above a bound path, outermost first; bubblewrap would make them 0700, so nobody could pass."""
    folders = {str(parent) for path in paths for parent in path.parents if str(parent) != "/"}
    return sorted(folders, key=lambda folder: (folder.count("/"), folder))


def bubblewrap_command(scratch_bytes: int, bubblewrap: str) -> list[str]:
    """The bubblewrap command line that starts the worker in a root, network and process table of its own."""
    runtime = _runtime_paths()
    command = [bubblewrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
    command += ["--unshare-cgroup-try", "--die-with-parent", "--new-session", "--clearenv"]
    if os.geteuid() == 0:
        # Root outside: no user namespace, so the drop to nobody inside is a real user of the host.
        command += ["--cap-drop", "ALL"]
        for capability in WORKER_CAPABILITIES:
            command += ["--cap-add", capability]
    else:
        command += ["--unshare-user"]
    for name, value in ENVIRONMENT.items():
        command += ["--setenv", name, value]
    command += ["--setenv", "HOME", SCRATCH_FOLDER]
    for top in ("lib", "lib64", "lib32"):
        target = Path("/", top)
        if target.is_symlink():
            command += ["--symlink", os.readlink(target), str(target)]
    for folder in _ancestors([*runtime, Path(SANDBOX_FOLDER)]):
        command += ["--perms", "0755", "--dir", folder]
    for path in runtime:
        command += ["--ro-bind", str(path), str(path)]
    command += ["--ro-bind", str(RUNTIME_FOLDER), SANDBOX_FOLDER]
    command += ["--proc", "/proc", "--dev", "/dev"]
    for folder, mode in (("/tmp", "1777"), ("/dev/shm", "1777"), (SCRATCH_FOLDER, "0711")):
        command += ["--size", str(scratch_bytes), "--perms", mode, "--tmpfs", folder]
    command += ["--remount-ro", "/", "--chdir", SCRATCH_FOLDER]
    interpreter = os.path.realpath(sys.executable)
    # -E -s rather than -I, which would also drop the script's own folder from sys.path
    return [*command, interpreter, "-E", "-s", f"{SANDBOX_FOLDER}/worker.py"]


def worker_launch(scratch_bytes: int, *, plain: bool = False) -> WorkerLaunch:
    """How to start a worker here: in bubblewrap, or (`plain`, or with no bubblewrap and the weaker setting on)
    as a plain process working in a host folder of its own.

    Raises IsolationMissing when bubblewrap is not installed and the weaker setting is not on.
    """
    bubblewrap = shutil.which(BUBBLEWRAP)
    if bubblewrap is not None and not plain:
        return WorkerLaunch(
            command=bubblewrap_command(scratch_bytes, bubblewrap),
            environment=dict(ENVIRONMENT),
            scratch_root=SCRATCH_FOLDER,
            host_folder=None,
            isolated=True,
        )
    if not weaker_isolation_accepted():
        raise IsolationMissing(missing_words({"file_system": "bubblewrap (bwrap) is not installed"}))
    host_scratch_root = tempfile.mkdtemp(prefix="verity-sandbox-")
    Path(host_scratch_root).chmod(0o711)  # batch folders inside belong to the unprivileged user
    return WorkerLaunch(
        command=[sys.executable, "-E", "-s", str(RUNTIME_FOLDER / "worker.py")],
        environment={**ENVIRONMENT, "HOME": host_scratch_root},
        scratch_root=host_scratch_root,
        host_folder=host_scratch_root,
        isolated=False,
    )


def missing_words(missing: dict[str, str]) -> str:
    """E.g. "The custom-metric sandbox cannot wall the metric off on this worker: a root of its own ... is
    missing (...). Install bubblewrap on the worker ..."."""
    parts = "; ".join(f"{REQUIRED_LAYERS.get(layer, layer)} is missing ({why})" for layer, why in missing.items())
    return (
        f"The custom-metric sandbox cannot wall the metric off on this worker: {parts}. Install bubblewrap "
        f"(Debian's bwrap) on the worker and allow it namespaces, or set {ISOLATION_SETTING}={WEAKER} on the "
        "worker to accept weaker isolation."
    )


def check_layers(layers: dict[str, str]) -> None:
    """Raise IsolationMissing when a required layer is not on, unless the weaker setting accepts it."""
    missing = {layer: layers.get(layer, "not reported") for layer in REQUIRED_LAYERS if layers.get(layer) != ON}
    if missing and not weaker_isolation_accepted():
        raise IsolationMissing(missing_words(missing))


def start_failure_words(worker_error: str) -> str:
    """The words for a worker that bubblewrap could not start (a host that forbids namespaces, say)."""
    return missing_words({"file_system": f"bubblewrap could not start the worker: {worker_error}"})
