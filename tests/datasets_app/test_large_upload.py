"""Large files stream; memory stays flat (000): a 48 MB training file, generated as the request body goes out,
is uploaded to a real `verity serve`, and the server's peak memory grows by a small fraction of the file's size.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from consoles import served_console

BOUNDARY = "verity-large-upload-boundary"
LINES = 48_000  # about 1 KB a line: 48 MB in all
FILLER = "Add the numbers on this line and say the sum. " * 20


def example(number: int) -> bytes:
    chat = {"messages": [{"role": "user", "content": f"{FILLER}{number} + {number}?"},
                         {"role": "assistant", "content": str(2 * number)}]}  # fmt: skip
    return json.dumps(chat).encode() + b"\n"


def multipart_body(lines: int) -> Iterator[bytes]:
    """One `train` file part, its lines made as they are sent: the test never holds the file either."""
    yield (f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="train"; filename="train.jsonl"\r\n'
           "Content-Type: application/jsonl\r\n\r\n").encode()  # fmt: skip
    chunk: list[bytes] = []
    for number in range(lines):
        chunk.append(example(number))
        if len(chunk) == 256:
            yield b"".join(chunk)
            chunk.clear()
    yield b"".join(chunk)
    yield f"\r\n--{BOUNDARY}--\r\n".encode()


def memory_bytes(pid: int, field: str) -> int:
    """VmHWM (peak resident memory since the last reset) or VmRSS (resident now) of the process."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def reset_peak(pid: int) -> int:
    """Resets the process's VmHWM to what it holds now (Linux: "5" to clear_refs), so a start-up peak can't hide
    the upload's; returns the memory it holds now."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")
    return memory_bytes(pid, "VmRSS")


@pytest.fixture
def served(tmp_path) -> Iterator[tuple[str, int, dict[str, str], Path]]:
    """`verity serve` in its own process on the embedded default, and an owner's API token."""
    with served_console(tmp_path / "data") as console:
        yield console.url, console.process.pid, console.api, console.data_dir


def test_a_large_training_file_streams_to_storage_and_the_servers_memory_stays_flat(served):
    url, pid, api, data = served
    with httpx.Client(base_url=url, headers=api, timeout=120) as client:
        dataset_id = client.post("/api/datasets", json={"name": "large"}).json()["id"]
        content_type = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}
        upload = f"/api/datasets/{dataset_id}/versions"
        # a small upload first, so the code an upload runs is loaded before the peak is read
        warm = client.post(upload, content=multipart_body(8), headers=content_type)
        assert warm.status_code == 201, warm.text
        before = reset_peak(pid)

        answer = client.post(upload, content=multipart_body(LINES), headers=content_type)

        grown = memory_bytes(pid, "VmHWM") - before
    assert answer.status_code == 201, answer.text
    version = answer.json()
    assert version["split_counts"]["train"] == LINES
    stored = data / "storage" / "datasets" / version["id"] / "train.jsonl"
    file_size = sum(len(example(n)) for n in range(LINES))
    assert file_size > 45_000_000 and stored.stat().st_size > file_size * 0.9  # every row reached storage
    assert grown < file_size * 0.25, f"the server's peak memory grew {grown / 1e6:.1f} MB for {file_size / 1e6:.0f} MB"
