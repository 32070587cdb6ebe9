"""What the datasets API takes and answers: msgspec structs, built from the read models' rows."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import msgspec
from litestar.datastructures import UploadFile

from app.datasets.browse import ShownExample
from app.datasets.upload import UploadedFile
from app.runs.schemas import CommandAnswer
from app.shell.structs import from_row
from domain.datasets.version import SPLITS
from projections.catalog_reads import DatasetRow, DatasetVersionRow

# Uploads can be large: they stream to storage, so the request body is bounded only by this.
UPLOAD_MAX_BYTES = 8 * 1024**3


class DatasetIn(msgspec.Struct):
    name: str


class DatasetVersionSummary(msgspec.Struct):
    id: UUID
    number: int
    label: str
    split_counts: dict[str, int]
    shape: str
    has_images: bool
    archived: bool
    created_at: str
    created_by: str

    @classmethod
    def of(cls, row: DatasetVersionRow) -> DatasetVersionSummary:
        return from_row(cls, row)


class DatasetOut(msgspec.Struct):
    id: UUID
    name: str
    versions: list[DatasetVersionSummary]  # newest first
    created_at: str
    updated_at: str
    command: CommandAnswer | None = None

    @classmethod
    def of(cls, row: DatasetRow, versions: list[DatasetVersionRow], command: CommandAnswer | None = None) -> DatasetOut:
        return from_row(cls, row, versions=[DatasetVersionSummary.of(version) for version in versions], command=command)


class ExampleOut(msgspec.Struct):
    """An example as RL reads it: the prompt messages and the reference (the last message)."""

    prompt: list[dict[str, str]]
    reference: str

    @classmethod
    def of(cls, example: ShownExample) -> ExampleOut:
        return cls(prompt=[{"role": t.role, "content": t.text} for t in example.prompt], reference=example.reference)


class DatasetVersionOut(msgspec.Struct):
    id: UUID
    dataset_id: UUID
    dataset_name: str
    number: int
    label: str
    split_counts: dict[str, int]
    shape: str
    has_images: bool
    archived: bool
    created_at: str
    examples: dict[str, list[ExampleOut]]  # the first few of each split
    command: CommandAnswer | None = None

    @classmethod
    def of(
        cls, row: DatasetVersionRow, examples: dict[str, list[ShownExample]], command: CommandAnswer | None = None
    ) -> DatasetVersionOut:
        shown_examples = {split: [ExampleOut.of(e) for e in shown] for split, shown in examples.items()}
        return from_row(cls, row, examples=shown_examples, command=command)


def uploaded_files(form: dict[str, Any]) -> dict[str, UploadedFile]:
    """The files of a multipart form, by split; a file input left empty arrives as text and is skipped."""
    files = {}
    for split in SPLITS:
        value = form.get(split)
        if isinstance(value, list):  # the same field twice: take the first file
            value = next((v for v in value if isinstance(v, UploadFile)), None)
        if isinstance(value, UploadFile):
            files[split] = UploadedFile(value.filename, value.file)
    return files
