"""The data folder is its owner's alone: folders 0700, files 0600.

It holds every organization's events, uploads, rollouts and adapters, while a custom metric is one organization's
own code running on the same machine; nothing in the folder may be readable by another user of the machine (the
sandbox's unprivileged user among them). Two things keep it so, rather than a mode at every place a file is made:

- every Verity process runs with a umask of 0o077 (`owner_only_data_folder` around each `verity` command,
  `keep_new_files_private` in the child processes' entry points), and the processes it starts inherit it, so
  SQLite's databases with their -wal and -shm files, uploads, rollouts, adapters and models are all created
  owner-only; files opened with an explicit mode (the secret key, the first owner's password) ask for 0600;
- at start-up, whatever an older version left readable by others is tightened, once (`tighten`).
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

OWNER_ONLY_UMASK = 0o077  # folders come out 0700 and files 0600
GROUP_AND_OTHERS = 0o077


@dataclass(frozen=True)
class Tightened:
    """What a start-up walk did: paths made owner-only, and paths it could not change (another user's)."""

    paths: int
    refused: int


def keep_new_files_private() -> int:
    """From now on this process, and every process it starts, creates folders 0700 and files 0600.
    Returns the umask it had."""
    return os.umask(OWNER_ONLY_UMASK)


def tighten(root: Path) -> Tightened:
    """Takes the group's and others' permissions off `root` and everything under it. A symbolic link is neither
    changed nor followed, so nothing outside the folder changes.

    E.g. a folder 0755 holding a file 0644 and a link to /etc/passwd: the folder becomes 0700, the file 0600,
    the link and /etc/passwd stay as they were; Tightened(paths=2, refused=0).
    """
    paths = refused = 0
    for path, mode in _entries(root):
        if not mode & GROUP_AND_OTHERS:
            continue
        try:
            os.chmod(path, stat.S_IMODE(mode) & ~GROUP_AND_OTHERS)
        except FileNotFoundError:  # removed since the walk saw it
            continue
        except PermissionError:  # another user's file: say so rather than stop the start
            refused += 1
            continue
        paths += 1
    return Tightened(paths, refused)


def _entries(root: Path) -> Iterator[tuple[str, int]]:
    """Every path under `root` (root included, followed if it is itself a link) that is not a symbolic link,
    with its mode."""
    try:
        yield str(root), os.stat(root).st_mode
    except FileNotFoundError:
        return
    for folder, folders, files in os.walk(root, followlinks=False):  # a link to a folder is listed, not entered
        for name in (*folders, *files):
            path = os.path.join(folder, name)
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                continue
            if not stat.S_ISLNK(mode):
                yield path, mode


def open_data_folder(data_dir: Path) -> Tightened:
    """Creates the data folder (0700) or tightens the one there. Call it with the owner-only umask in force."""
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    tightened = tighten(data_dir)
    if tightened.paths or tightened.refused:
        # A warning, so the line shows even where no logging is configured (most `verity` commands).
        log.warning(
            "The data folder %s was readable by others: made %d path(s) owner-only (folders 0700, files 0600)%s.",
            data_dir,
            tightened.paths,
            f"; {tightened.refused} path(s) belong to another user and were left as they are"
            if tightened.refused
            else "",
        )
    return tightened


@contextmanager
def owner_only_data_folder(data_dir: Path) -> Iterator[Tightened]:
    """For the length of a command: new files owner-only, in this process and its children, and the data folder
    created or tightened. The umask it found comes back at the end, for a caller that runs the command in its
    own process (a test's CliRunner, a script)."""
    previous = keep_new_files_private()
    try:
        yield open_data_folder(data_dir)
    finally:
        os.umask(previous)
