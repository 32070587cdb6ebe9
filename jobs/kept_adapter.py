"""Whether a run whose worker died had already saved its adapter whole: then the reconciler keeps it.

The trainer writes `runs/<run id>/adapter/` (adapter_config.json, adapter_model.safetensors) before it reports
the adapter. A safetensors file says in its header how long it must be, so a copy cut short is told apart from a
complete one without loading any model library.
"""

from __future__ import annotations

import json
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from jobs.run_storage import RunStorage
from trainer.storage import file_sha256  # the checksum the trainer reports with the adapter

WEIGHTS = "adapter_model.safetensors"
CONFIG = "adapter_config.json"


@dataclass(frozen=True)
class KeptAdapter:
    location: str
    sha256: str
    size_bytes: int

    @classmethod
    def of(cls, location: str, weights: Path) -> KeptAdapter:
        """The adapter at `location`, with its weights file's checksum and size as the trainer reports them."""
        return cls(location=location, sha256=file_sha256(weights), size_bytes=weights.stat().st_size)


def is_complete_safetensors(path: Path) -> bool:
    """The file is as long as its header says: 8 bytes of header length, the JSON header, then the tensors."""
    size = path.stat().st_size
    if size < 8:
        return False
    with path.open("rb") as handle:
        (header_length,) = struct.unpack("<Q", handle.read(8))
        if header_length > size - 8:
            return False
        try:
            header = json.loads(handle.read(header_length))
        except ValueError:
            return False
    ends = [entry["data_offsets"][1] for name, entry in header.items() if name != "__metadata__"]
    return size == 8 + header_length + max(ends, default=0)


def _check(folder: Path, location: str) -> KeptAdapter | None:
    weights = folder / WEIGHTS
    if not (folder / CONFIG).is_file() or not weights.is_file() or not is_complete_safetensors(weights):
        return None
    return KeptAdapter.of(location, weights)


def find_kept_adapter(storage: RunStorage, run_id: str) -> KeptAdapter | None:
    """The run's adapter in its storage when it is whole, with its checksum and size; else None."""
    key = f"runs/{run_id}/adapter"
    if not storage.is_s3:
        root = Path(storage.storage.location)
        return _check(root / key, str(root / key))
    parsed = urlparse(storage.storage.location)
    prefix = parsed.path.strip("/")
    object_prefix = f"{prefix}/{key}" if prefix else key
    client = storage.s3_client()
    with tempfile.TemporaryDirectory(prefix="verity-kept-") as folder:
        for name in (CONFIG, WEIGHTS):
            try:
                client.download_file(parsed.netloc, f"{object_prefix}/{name}", str(Path(folder) / name))
            except Exception:  # absent (or unreadable): no adapter was kept
                return None
        return _check(Path(folder), f"s3://{parsed.netloc}/{object_prefix}")
