"""The data folder is its owner's alone (a custom metric is another organization's code on the same machine):
a real `verity serve` makes it with folders 0700 and files 0600, its uploads too, and a folder an older version
left readable by others is tightened when a command starts, without following a link out of it."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import stat
from pathlib import Path

import httpx
from click.testing import CliRunner

from verity.cli import main


def loose_paths(folder: Path) -> list[str]:
    """Every folder not 0700 and every file not 0600 under `folder` (itself included); links are not followed."""
    found = []
    for path in [folder, *folder.rglob("*")]:
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode):
            continue
        wanted = 0o700 if stat.S_ISDIR(mode) else 0o600
        if stat.S_IMODE(mode) != wanted:
            found.append(f"{oct(stat.S_IMODE(mode))} {path.relative_to(folder.parent)}")
    return found


def chat(question: str, reference: str) -> bytes:
    messages = [{"role": "user", "content": question}, {"role": "assistant", "content": reference}]
    return json.dumps({"messages": messages}).encode() + b"\n"


def test_a_served_console_keeps_its_data_folder_and_the_uploads_in_it_to_its_owner(served, tmp_path):
    data = tmp_path / "data"
    started_with = {path.name for path in data.iterdir()}
    assert {"events.sqlite", "readmodels.sqlite", "secret.key", "first-owner.txt"} <= started_with
    assert any(name.endswith(("-wal", "-shm")) for name in started_with)  # SQLite's own files, while it serves
    assert loose_paths(data) == []

    with httpx.Client(base_url=served.url, headers=served.api, timeout=30) as client:
        dataset_id = client.post("/api/datasets", json={"name": "arithmetic"}).json()["id"]
        train = b"".join(chat(f"What is {n} + {n}?", str(2 * n)) for n in range(1, 9))
        uploaded = client.post(
            f"/api/datasets/{dataset_id}/versions", files={"train": ("train.jsonl", train, "application/jsonl")}
        )
        assert uploaded.status_code == 201, uploaded.text

    stored = list((data / "storage").rglob("train.jsonl"))
    assert len(stored) == 1 and stored[0].read_bytes()
    assert loose_paths(data) == []


def test_a_folder_left_readable_by_an_older_version_is_tightened_when_a_command_starts(tmp_path, monkeypatch, caplog):
    data, outside = tmp_path / "data", tmp_path / "outside"
    version = data / "storage" / "datasets" / "v1"
    version.mkdir(parents=True)
    outside.mkdir()
    (outside / "not ours.txt").write_text("someone else's")
    sqlite3.connect(data / "events.sqlite").close()  # as an older version left them: 0755 folders, 0644 files
    (version / "train.jsonl").write_bytes(chat("What is 1 + 1?", "2"))
    descriptor = os.open(data / "secret.key", os.O_WRONLY | os.O_CREAT, 0o600)
    os.close(descriptor)
    (data / "their folder").symlink_to(outside)
    (data / "their file").symlink_to(outside / "not ours.txt")
    for path in (data, data / "storage", data / "storage" / "datasets", version, outside):
        path.chmod(0o755)
    for path in (data / "events.sqlite", version / "train.jsonl", outside / "not ours.txt"):
        path.chmod(0o644)
    monkeypatch.setenv("VERITY_DATA_DIR", str(data))
    monkeypatch.delenv("VERITY_DATABASE_URL", raising=False)
    umask_before = os.umask(0o022)

    with caplog.at_level(logging.WARNING, logger="verity.data_folder"):
        migrated = CliRunner().invoke(main, ["migrate"])

    assert migrated.exit_code == 0, migrated.output
    assert loose_paths(data) == []  # readmodels.sqlite, made by the command, is owner-only too
    assert (data / "readmodels.sqlite").exists()
    # data, storage, datasets, v1, events.sqlite, train.jsonl; the secret key was 0600 already
    assert "made 6 path(s) owner-only (folders 0700, files 0600)" in caplog.text
    assert stat.S_IMODE(outside.stat().st_mode) == 0o755  # the links were not followed out of the folder
    assert stat.S_IMODE((outside / "not ours.txt").stat().st_mode) == 0o644
    assert os.umask(umask_before) == 0o022  # the command gave its in-process caller its umask back

    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="verity.data_folder"):
        again = CliRunner().invoke(main, ["migrate"])
    assert again.exit_code == 0 and "owner-only" not in caplog.text  # nothing left to tighten, nothing said
