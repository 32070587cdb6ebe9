"""Saving a run's adapter to the storage: every file of the PEFT folder under runs/<run id>/adapter/, and the
sha256 and size of its weights file, which a run that starts from it checks (model_loading.fetch_start_adapter)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from trainer.model_loading import ADAPTER_WEIGHTS
from trainer.progress import AdapterSaved
from trainer.storage import RunStorage, file_sha256


def store_adapter(run_id: str, storage: RunStorage, model, best_round: int) -> AdapterSaved:
    """`model` is a peft PeftModel holding the adapter to keep."""
    with tempfile.TemporaryDirectory(prefix="verity-adapter-") as folder:
        # peft would also save a targeted output head's whole frozen weight; the base model has it already
        model.save_pretrained(folder, save_embedding_layers=False)
        weights = Path(folder) / ADAPTER_WEIGHTS
        for path in sorted(Path(folder).iterdir()):
            if path.is_file():
                storage.put_file(f"runs/{run_id}/adapter/{path.name}", path)
        return AdapterSaved(
            location=storage.location(f"runs/{run_id}/adapter"),
            sha256=file_sha256(weights),
            size_bytes=weights.stat().st_size,
            best_round=best_round,
        )
