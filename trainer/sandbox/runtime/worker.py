"""The sandbox worker: a clean process per metric that forks one locked-down child per batch of answers.

Standard library only; started by `trainer.sandbox.metric` as `python -E -s worker.py`, inside bubblewrap
(trainer/sandbox/isolation.py) with an empty environment. Protocol, one JSON object per line. In: the setup
{"source", "limits", "scratch_root"}, answered by {"layers": {...}}, what the worker sees of its walls; then
each request {"batches": [[answers, references], ...]}, answered by {"outcomes": [...]}, one per batch:
{"scores": [[value] | [null, kind, detail], ...]}, or {"failure": kind, "detail": text} for the whole batch.
Forking from this small process costs a millisecond or two, where a fresh Python per batch costs tens.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import selectors
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field

import jail

# Imported once here, so each batch child has them at no cost, and so a metric can use them even where the
# unprivileged user cannot read the Python installation (on this machine it lies under /root, mode 0700).
PRELOADED_MODULES = [
    *(
        "ast",
        "base64",
        "bisect",
        "collections",
        "copy",
        "csv",
        "dataclasses",
        "datetime",
        "decimal",
        "difflib",
    ),
    *(
        "enum",
        "fractions",
        "functools",
        "hashlib",
        "heapq",
        "html",
        "html.parser",
        "itertools",
        "json",
        "math",
    ),
    *("numbers", "operator", "random", "re", "statistics", "string", "textwrap", "typing", "unicodedata"),
    *("urllib.parse", "xml.etree.ElementTree", "zlib", "encodings.ascii", "encodings.latin_1"),
    *("encodings.cp1252", "encodings.idna", "encodings.utf_16", "encodings.utf_32"),
    "socket",  # harmless: the network namespace and the audit hook stand between it and any connection
]
RESULT_BYTES = 1024 * 1024  # eight scores need a few hundred bytes; more is a metric writing on our pipe


@dataclass
class Child:
    """One batch in flight."""

    index: int
    pid: int
    pidfd: int
    output_fd: int
    result_fd: int
    scratch_dir: str
    deadline: float
    output_bytes: int = 0
    result: bytearray = field(default_factory=bytearray)
    killed_for: str | None = None


def _reply(message: dict[str, object]) -> None:
    data = memoryview((json.dumps(message) + "\n").encode())
    while data:
        data = data[os.write(1, data) :]


def _make_scratch_dir(scratch_root: str) -> str:
    path = tempfile.mkdtemp(prefix="batch-", dir=scratch_root)
    if os.geteuid() == 0:
        os.chown(path, jail.NOBODY, jail.NOBODY)
    return path


def _start(index: int, batch: list[list[str]], setup: dict, limits: dict) -> Child:
    answers, references = batch
    scratch_dir = _make_scratch_dir(setup["scratch_root"])
    output_read, output_write = os.pipe()
    result_read, result_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        jail.run_batch(setup["source"], answers, references, limits, scratch_dir, output_write, result_write)
    os.close(output_write)
    os.close(result_write)
    os.set_blocking(output_read, False)
    os.set_blocking(result_read, False)
    return Child(
        index=index,
        pid=pid,
        pidfd=os.pidfd_open(pid),
        output_fd=output_read,
        result_fd=result_read,
        scratch_dir=scratch_dir,
        deadline=time.monotonic() + float(limits["batch_seconds"]),
    )


def _kill(child: Child, reason: str) -> None:
    if child.killed_for is None:
        child.killed_for = reason
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except OSError:  # not yet its own group leader
        os.kill(child.pid, signal.SIGKILL)


def _drain(child: Child, fd: int, limits: dict) -> bool:
    """Reads what is there; False at end of file."""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        if fd == child.output_fd:
            child.output_bytes += len(chunk)
            if child.output_bytes > limits["output_bytes"]:
                _kill(child, "output")
        else:
            child.result += chunk
            if len(child.result) > RESULT_BYTES:
                _kill(child, "result_size")


def _outcome(child: Child, status: int, cpu_seconds: float, limits: dict) -> dict[str, object]:
    if child.killed_for == "output" or child.output_bytes > limits["output_bytes"]:
        return {"failure": "output", "detail": f"printed more than {limits['output_bytes']} bytes"}
    if child.killed_for == "timeout":
        return {"failure": "timeout", "detail": f"ran past {limits['batch_seconds']} seconds"}
    if os.WIFSIGNALED(status) and (
        os.WTERMSIG(status) == signal.SIGXCPU or cpu_seconds >= int(limits["batch_seconds"])
    ):
        return {"failure": "timeout", "detail": f"used more than {limits['batch_seconds']} seconds of CPU"}
    try:
        outcome = json.loads(bytes(child.result))
    except ValueError:
        outcome = None
    if isinstance(outcome, dict) and outcome.get("failure") in ("execution", "memory"):
        return {"failure": outcome["failure"], "detail": str(outcome.get("detail", ""))}
    if isinstance(outcome, dict) and isinstance(outcome.get("scores"), list):
        return outcome
    if os.WIFSIGNALED(status):
        how = f"was ended by signal {signal.Signals(os.WTERMSIG(status)).name}"
    else:
        how = f"exited with status {os.WEXITSTATUS(status)}"
    return {"failure": "execution", "detail": f"the metric's process {how} before it reported scores"}


def _finish(child: Child, limits: dict) -> dict[str, object]:
    _, status, usage = os.wait4(child.pid, 0)
    for fd in (child.output_fd, child.result_fd):
        _drain(child, fd, limits)
        os.close(fd)
    os.close(child.pidfd)
    shutil.rmtree(child.scratch_dir, ignore_errors=True)
    return _outcome(child, status, usage.ru_utime + usage.ru_stime, limits)


def run_batches(batches: list[list[list[str]]], setup: dict) -> list[dict[str, object]]:
    limits = setup["limits"]
    outcomes: list[dict[str, object]] = [{}] * len(batches)
    waiting = list(enumerate(batches))
    running: dict[int, Child] = {}
    selector = selectors.DefaultSelector()
    while waiting or running:
        while waiting and len(running) < int(limits["parallel_batches"]):
            index, batch = waiting.pop(0)
            child = _start(index, batch, setup, limits)
            running[child.pid] = child
            selector.register(child.output_fd, selectors.EVENT_READ, child)
            selector.register(child.result_fd, selectors.EVENT_READ, child)
            selector.register(child.pidfd, selectors.EVENT_READ, child)
        now = time.monotonic()
        for child in running.values():
            if child.deadline <= now:
                _kill(child, "timeout")
        next_deadline = min(child.deadline for child in running.values())
        for key, _ in selector.select(timeout=max(0.0, next_deadline - now) + 0.01):
            child = key.data
            if child.pid not in running:
                continue
            if key.fd == child.pidfd:
                for fd in (child.output_fd, child.result_fd, child.pidfd):
                    with contextlib.suppress(KeyError):  # a pipe already at its end
                        selector.unregister(fd)
                del running[child.pid]
                outcomes[child.index] = _finish(child, limits)
            elif not _drain(child, key.fd, limits):
                selector.unregister(key.fd)
    selector.close()
    return outcomes


def _preload() -> None:
    for module in PRELOADED_MODULES:
        with contextlib.suppress(ImportError):
            importlib.import_module(module)


def seen_layers() -> dict[str, str]:
    """Each wall as seen from inside: "on", or what shows it is not there. Evidence, not the launcher's word."""
    import socket

    interfaces = sorted(name for _, name in socket.if_nameindex())
    processes = [entry for entry in os.listdir("/proc") if entry.isdigit()]
    host_paths = [path for path in ("/etc/passwd", "/home", "/var", "/root/.bashrc") if os.path.exists(path)]
    return {
        "file_system": "on" if not host_paths else f"the host's {', '.join(host_paths)} can be seen",
        "network": "on" if interfaces in ([], ["lo"]) else f"network interfaces {', '.join(interfaces)}",
        "processes": "on" if len(processes) <= 3 else f"{len(processes)} processes can be seen",
        "user_drop": "on" if os.geteuid() == 0 else "not root: the metric runs as the worker's own user",
        "resource_limits": "on",
        "audit_hook": "on",
    }


def main() -> None:
    _preload()
    requests = sys.stdin.buffer
    setup = json.loads(requests.readline())
    os.makedirs(setup["scratch_root"], mode=0o711, exist_ok=True)
    _reply({"layers": seen_layers()})
    for line in requests:
        request = json.loads(line)
        _reply({"outcomes": run_batches(request["batches"], setup)})


if __name__ == "__main__":
    main()
