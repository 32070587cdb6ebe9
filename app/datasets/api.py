"""The datasets API: create a dataset, upload a version (multipart: train, validation, test), read them.

A refused upload answers 422 with {"errors": {split: "train.jsonl (training examples): Line 3: ..."}} and stores
nothing: no file in storage, no event in the log.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar
from uuid import UUID

from litestar import Controller, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body

from app.datasets.browse import first_examples
from app.datasets.dependencies import StorageDep
from app.datasets.schemas import (
    UPLOAD_MAX_BYTES,
    DatasetIn,
    DatasetOut,
    DatasetVersionOut,
    uploaded_files,
)
from app.datasets.upload import record_stored_version, store_version_files
from app.runs.schemas import CommandAnswer
from app.shell.console import ConsoleController, ConsoleDep
from app.shell.dependencies import ReadModelsDep
from app.shell.identity import Identity
from domain.errors import NotFound

UPLOAD = Body(
    media_type=RequestEncodingType.MULTI_PART,
    title="Version files",
    description="Up to three JSONL files, one JSON example a line: `train`, `validation` and `test`.",
)


class DatasetsApiController(ConsoleController):
    path = "/datasets"
    tags: ClassVar[list[str]] = ["Datasets"]

    @get("/", name="api:datasets:list", sync_to_thread=True)
    def list_datasets(self, console: ConsoleDep) -> list[DatasetOut]:
        read_models, org_id = console.read_models, console.organization_id
        return [
            DatasetOut.of(row, read_models.dataset_versions(org_id, row.id)) for row in read_models.datasets(org_id)
        ]

    @post("/", name="api:datasets:create", status_code=201, sync_to_thread=True)
    def create(self, data: DatasetIn, console: ConsoleDep) -> DatasetOut:
        written = console.verity.create_dataset(console.organization_id, data.name, console.actor)
        console.own_writes.see(written.position)
        dataset = _found(console.read_models.dataset(console.organization_id, written.id))
        return DatasetOut.of(dataset, [], CommandAnswer(id=written.id, position=written.position))

    @get("/{dataset_id:uuid}", name="api:datasets:detail", sync_to_thread=True)
    def detail(self, dataset_id: UUID, console: ConsoleDep) -> DatasetOut:
        read_models, org_id = console.read_models, console.organization_id
        dataset = _found(read_models.dataset(org_id, dataset_id))
        return DatasetOut.of(dataset, read_models.dataset_versions(org_id, dataset_id))

    @post(
        "/{dataset_id:uuid}/versions",
        name="api:datasets:upload",
        status_code=201,
        sync_to_thread=True,
        request_max_body_size=UPLOAD_MAX_BYTES,
    )
    def upload(
        self, dataset_id: UUID, data: Annotated[dict[str, Any], UPLOAD], console: ConsoleDep, storage: StorageDep
    ) -> DatasetVersionOut:
        """Upload a version: every file is parsed before anything is stored or recorded."""
        org_id = console.organization_id
        console.verity.get_dataset(org_id, dataset_id)  # an unknown dataset is refused before the files are read
        stored = store_version_files(storage, uploaded_files(data))
        written = record_stored_version(console.verity, storage, stored, org_id, dataset_id, console.actor)
        console.own_writes.see(written.position)
        version = _found(console.read_models.dataset_version(org_id, written.id))
        return DatasetVersionOut.of(
            version, first_examples(storage, version), CommandAnswer(id=written.id, position=written.position)
        )


class DatasetVersionsApiController(Controller):
    path = "/dataset-versions"
    tags: ClassVar[list[str]] = ["Datasets"]

    @get("/{version_id:uuid}", name="api:dataset-versions:detail", sync_to_thread=True)
    def detail(
        self, version_id: UUID, read_models: ReadModelsDep, storage: StorageDep, identity: Identity
    ) -> DatasetVersionOut:
        """A version with its counts per split and the first few examples of each, prompt and reference."""
        version = _found(read_models.dataset_version(identity.organization_id, version_id))
        return DatasetVersionOut.of(version, first_examples(storage, version))


def _found(row: Any) -> Any:
    if row is None:
        raise NotFound("There is no such dataset or version in this organization.")
    return row
