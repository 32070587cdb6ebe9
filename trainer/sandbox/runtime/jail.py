"""One batch child: lock the process down, then run the metric on each answer and send the scores back.

Standard library only: this file runs inside the sandbox worker, forked per batch; it never returns.
Order matters: file descriptors, folder and environment first, then resource limits, then the user drop
(limits set as root still bind after it), then the audit hook, and only then the metric's own code.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import math
import numbers
import os
import resource
import signal
import sys

NOBODY = 65534
PR_SET_NO_NEW_PRIVS = 38
RESULT_FD = 3
METRIC_FILENAME = "metric.py"
MEMORY_MARKER = b'{"failure": "memory", "detail": "MemoryError"}'
DETAIL_CHARACTERS = 300

# Audit events of things a metric never needs: the network, new processes, signals to others.
# A second layer: the network namespace, RLIMIT_NPROC and the user drop hold even when code goes around these.
REFUSED_EVENTS = frozenset(
    {
        "socket.__new__",
        "socket.bind",
        "socket.connect",
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "socket.sendto",
        "socket.sendmsg",
        "subprocess.Popen",
        "os.system",
        "os.fork",
        "os.forkpty",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.kill",
        "os.killpg",
        "pty.spawn",
    }
)


def _refuse_escapes(event: str, args: tuple[object, ...]) -> None:
    if event in REFUSED_EVENTS:
        raise PermissionError(f"the metric sandbox does not allow {event}")


def _metric_line(error: BaseException) -> int | None:
    """The last line of the metric's own code that the error passed through."""
    line, trace = None, error.__traceback__
    while trace is not None:
        if trace.tb_frame.f_code.co_filename == METRIC_FILENAME:
            line = trace.tb_lineno
        trace = trace.tb_next
    return line


def _describe(error: BaseException) -> str:
    """E.g. "KeyError at line 4: 'answer'"; before the first ": " it names no answer or reference."""
    name = type(error).__name__
    line = _metric_line(error)
    where = f"{name} at line {line}" if line else name
    try:
        text = f"{where}: {error}"
    except Exception:  # a user exception whose __str__ fails
        text = where
    return text[:DETAIL_CHARACTERS]


def _set_limits(limits: dict[str, float]) -> None:
    cpu_seconds = math.ceil(limits["batch_seconds"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_AS, (int(limits["memory_bytes"]),) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (int(limits["open_files"]),) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(limits["file_bytes"]),) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # No new processes or threads for this user. It does not bind root, hence the user drop that follows.
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    # A too-large write should raise an error the metric sees, not kill the batch.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def _drop_capabilities() -> None:
    """Give up every capability; needed where the worker is "root" only inside its own user namespace."""

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [
            ("effective", ctypes.c_uint32),
            ("permitted", ctypes.c_uint32),
            ("inheritable", ctypes.c_uint32),
        ]

    libc = ctypes.CDLL(None, use_errno=True)
    header = Header(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    empty = (Data * 2)()
    libc.capset(ctypes.byref(header), empty)
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def _drop_user() -> None:
    if os.geteuid() == 0:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    _drop_capabilities()


def _prepare_process(scratch_dir: str, output_fd: int, result_fd: int) -> None:
    os.setsid()  # its own process group, so the worker can kill anything it leaves behind
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(output_fd, 1)
    os.dup2(output_fd, 2)
    os.dup2(result_fd, RESULT_FD)
    os.closerange(RESULT_FD + 1, 1 << 16)  # the worker's request pipe and every other batch's pipes
    os.chdir(scratch_dir)
    os.environ.clear()
    os.environ.update(
        {
            "HOME": scratch_dir,
            "TMPDIR": scratch_dir,
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "OMP_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
        }
    )


def _judge(value: object) -> list[object]:
    """[value] for a real number in [0, 1]; else [None, "result", what it was]. A bool is not a score."""
    try:
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            number = float(value)
            if math.isfinite(number) and 0.0 <= number <= 1.0:
                return [number]
        shown = repr(value)[:DETAIL_CHARACTERS]
    except MemoryError:
        raise
    except Exception:
        shown = f"a {type(value).__name__}"
    return [None, "result", shown]


def _send(result: bytes) -> None:
    view = memoryview(result)
    while view:
        view = view[os.write(RESULT_FD, view) :]
    os.close(RESULT_FD)


def _score_all(source: str, answers: list[str], references: list[str]) -> dict[str, object]:
    namespace: dict[str, object] = {"__name__": "metric", "__builtins__": __builtins__}
    try:
        exec(compile(source, METRIC_FILENAME, "exec"), namespace)
    except MemoryError:
        raise
    except BaseException as error:
        return {"failure": "execution", "detail": f"the metric failed to load: {_describe(error)}"}
    score = namespace.get("score")
    if not callable(score):
        return {"failure": "execution", "detail": "The metric defines no score(answer, reference) function."}
    results: list[list[object]] = []
    for answer, reference in zip(answers, references, strict=True):
        try:
            results.append(_judge(score(answer, reference)))
        except MemoryError:
            raise
        except BaseException as error:  # SystemExit and KeyboardInterrupt too: they fail only this answer
            results.append([None, "execution", _describe(error)])
    return {"scores": results}


def run_batch(
    source: str,
    answers: list[str],
    references: list[str],
    limits: dict[str, float],
    scratch_dir: str,
    output_fd: int,
    result_fd: int,
) -> None:
    """Runs in the forked child; ends the process with os._exit."""
    status = 0
    try:
        _prepare_process(scratch_dir, output_fd, result_fd)
        _set_limits(limits)
        _drop_user()
        sys.addaudithook(_refuse_escapes)
        outcome = _score_all(source, answers, references)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # the metric may have closed or replaced them
                stream.flush()
        _send(json.dumps(outcome).encode())
    except MemoryError:
        try:
            _send(MEMORY_MARKER)
        except BaseException:
            status = 3
    except BaseException:
        status = 2
    os._exit(status)
