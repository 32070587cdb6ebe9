"""A hostile custom metric for the sandbox tests: the answer text names the attack it makes.

Each probe that looks for a secret returns 1.0 when it found the reference (the secret) and 0.0 when it did
not, so a test can run the same probe in its own process first and show that it would find the secret there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from trainer.sandbox import SandboxedMetric, SandboxLimits

HOSTILE_METRIC = r'''
import ctypes
import os
import struct
import time

libc = ctypes.CDLL(None, use_errno=True)


def _contains(path, secret):
    try:
        with open(path, "rb") as file:
            return secret.encode() in file.read()
    except OSError:
        return False


def _every_process_file(secret):
    found = False
    for name in os.listdir("/proc"):
        if name.isdigit():
            for part in ("environ", "cmdline"):
                found = found or _contains(f"/proc/{name}/{part}", secret)
    return found


def _raw_connect(port, host="127.0.0.1"):
    """socket() and connect() straight from libc, around Python's audit hooks."""
    fd = libc.socket(2, 1, 0)  # AF_INET, SOCK_STREAM
    if fd < 0:
        return False
    octets = bytes(int(part) for part in host.split("."))
    address = struct.pack("=H", 2) + struct.pack(">H", port) + octets + bytes(8)
    connected = libc.connect(fd, address, len(address)) == 0
    libc.close(fd)
    return connected


def score(answer, reference):
    probe, _, argument = answer.partition(":")
    if probe == "own_environment":
        return float(any(reference in value for value in os.environ.values()))
    if probe == "every_process":
        return float(_every_process_file(reference))
    if probe == "file":
        return float(_contains(argument, reference))
    if probe == "socket":
        import socket
        with socket.socket() as connection:
            connection.settimeout(1)
            connection.connect(("127.0.0.1", int(argument)))
        return 1.0
    if probe == "raw_socket":
        return float(_raw_connect(int(argument)))
    if probe == "raw_socket_to":
        host, _, port = argument.partition(",")
        return float(_raw_connect(int(port), host))
    if probe == "list":
        try:
            return float(len(os.listdir(argument)) > 0)
        except OSError:
            return 0.0
    if probe == "fork_bomb":
        while True:
            os.fork()
    if probe == "raw_fork":
        pid = libc.fork()
        if pid == 0:
            libc._exit(0)
        return float(pid > 0)
    if probe == "loop":
        while True:
            pass
    if probe == "sleep":
        time.sleep(3600)
    if probe == "allocate":
        hoard = []
        while True:
            hoard.append(bytes(64 * 1024 * 1024))  # calloc: reserved at once, touched never, so it is quick
    if probe == "print":
        for _ in range(1000):
            print("x" * 4096)
        return 1.0
    if probe == "raise":
        raise KeyError(reference)
    if probe == "exit":
        raise SystemExit(0)
    if probe == "hard_exit":
        os._exit(0)
    if probe == "unprivileged":
        return float(os.getuid() != 0 and os.geteuid() != 0)
    if probe == "write":
        with open(argument, "w") as file:
            file.write("left behind")
        return 1.0
    if probe == "private_folder":
        with open("note.txt", "w") as file:
            file.write("mine")
        home = os.environ.get("HOME", "")
        return float(os.getcwd() == home and os.path.exists(os.path.join(home, "note.txt")))
    results = {"nan": float("nan"), "two": 2.0, "negative": -0.5, "text": "1", "nothing": None, "true": True}
    if probe in results:
        return results[probe]
    return float(answer == reference)
'''


def _run_here(answer: str, reference: str) -> object:
    namespace: dict[str, object] = {}
    exec(HOSTILE_METRIC, namespace)
    return namespace["score"](answer, reference)  # type: ignore[operator]


@pytest.fixture
def run_here() -> Callable[[str, str], object]:
    """The hostile metric run in the test's own process: what it would see without the sandbox."""
    return _run_here


@pytest.fixture
def start_hostile_metric() -> Iterator[Callable[[], SandboxedMetric]]:
    """Starts the hostile metric at short limits (2 s a batch), whenever the test is ready; closed after."""
    started: list[SandboxedMetric] = []

    def start() -> SandboxedMetric:
        started.append(SandboxedMetric(HOSTILE_METRIC, name="hostile (v1)", limits=SandboxLimits(batch_seconds=2)))
        return started[-1]

    yield start
    for metric in started:
        metric.close()


@pytest.fixture
def hostile_metric(start_hostile_metric) -> SandboxedMetric:
    return start_hostile_metric()
