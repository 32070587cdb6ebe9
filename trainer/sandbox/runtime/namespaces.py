"""Kernel namespaces the sandbox worker enters once, before any metric runs; every batch child inherits them.

Standard library only: this file runs inside the sandbox worker, which imports nothing of the project.
Each layer is best-effort, because containers differ in what they allow; `enter_namespaces` says which took.
"""

from __future__ import annotations

import ctypes
import os

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000

MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REC = 0x4000
MS_PRIVATE = 0x40000

SHARED_WRITABLE_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm")

_libc = ctypes.CDLL(None, use_errno=True)


def _call(result: int) -> str | None:
    """None when a libc call worked, else the reason in words."""
    if result == 0:
        return None
    return os.strerror(ctypes.get_errno())


def _unshare(flags: int) -> str | None:
    return _call(_libc.unshare(flags))


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> str | None:
    def encode(text: str | None) -> bytes | None:
        return None if text is None else os.fsencode(text)

    return _call(_libc.mount(encode(source), encode(target), encode(fstype), flags, encode(data)))


def _map_own_ids() -> None:
    """In a new user namespace, keep our own uid and gid (not root) so files stay ours."""
    uid, gid = os.getuid(), os.getgid()
    with open("/proc/self/setgroups", "w") as file:
        file.write("deny")
    with open("/proc/self/uid_map", "w") as file:
        file.write(f"{uid} {uid} 1")
    with open("/proc/self/gid_map", "w") as file:
        file.write(f"{gid} {gid} 1")


def enter_namespaces(scratch_root: str, scratch_bytes: int) -> dict[str, str]:
    """Cut the worker off from the network and the host's mounts; returns each layer with "on" or why not.

    As root: a new network namespace (only a loopback that is down, so even 127.0.0.1 is unreachable) and a
    new mount namespace where the scratch folder is a size-capped tmpfs and /proc hides others' processes.
    Not root: the same through a new user namespace, where the kernel allows unprivileged ones.
    """
    layers: dict[str, str] = {}
    if os.geteuid() != 0:
        problem = _unshare(CLONE_NEWUSER)
        layers["user_namespace"] = problem or "on"
        if problem:
            for layer in ("network_namespace", "mount_namespace", "private_tmp", "scratch_tmpfs", "proc_hidepid"):
                layers[layer] = "needs root or a user namespace"
            return layers
        _map_own_ids()

    network_problem = _unshare(CLONE_NEWNET)
    layers["network_namespace"] = network_problem or "on"

    mount_problem = _unshare(CLONE_NEWNS) or _mount("none", "/", None, MS_REC | MS_PRIVATE, None)
    layers["mount_namespace"] = mount_problem or "on"
    if mount_problem:
        for layer in ("private_tmp", "scratch_tmpfs", "proc_hidepid"):
            layers[layer] = "needs a mount namespace"
        return layers
    # The host's world-writable folders are replaced by small private ones, so nothing a metric writes outlives
    # the worker or fills the host's disk. The scratch root under /tmp is made again inside the new /tmp.
    shared_problems = [
        f"{folder}: {problem}"
        for folder in SHARED_WRITABLE_FOLDERS
        if os.path.isdir(folder)
        and (problem := _mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, f"size={scratch_bytes},mode=1777"))
    ]
    layers["private_tmp"] = "; ".join(shared_problems) or "on"
    os.makedirs(scratch_root, mode=0o711, exist_ok=True)
    tmpfs_options = f"size={scratch_bytes},mode=0711"
    layers["scratch_tmpfs"] = _mount("tmpfs", scratch_root, "tmpfs", MS_NOSUID | MS_NODEV, tmpfs_options) or "on"
    proc_flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
    hidepid_problem = _mount("proc", "/proc", "proc", proc_flags, "hidepid=invisible")
    if hidepid_problem:  # kernels before 5.8 know only the number
        hidepid_problem = _mount("proc", "/proc", "proc", proc_flags, "hidepid=2")
    layers["proc_hidepid"] = hidepid_problem or "on"
    return layers
