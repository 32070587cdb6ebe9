"""The datasets pages: Datasets (with New dataset), a dataset with its versions, Upload a version, Browse a version.

A refused form comes back with the domain's words under the field they concern (status 422); a write redirects
to what it made, once the read models show it.
"""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from litestar import Controller, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Redirect, Template

from app.datasets.browse import first_examples
from app.datasets.dependencies import StorageDep
from app.datasets.schemas import UPLOAD_MAX_BYTES, uploaded_files
from app.datasets.upload import record_stored_version, store_version_files
from app.shell.commands import redirect_once_seen
from app.shell.dependencies import OwnWritesDep, ReadModelsDep
from app.shell.identity import Identity
from domain.access.roles import CHANGE
from domain.application import Verity
from domain.datasets.examples import SHAPE_NAMES
from domain.datasets.version import SPLIT_NAMES, SPLITS
from domain.errors import NotFound, SettingsInvalid, StorageUnavailable
from projections.store import ReadModels

FORM = Body(media_type=RequestEncodingType.URL_ENCODED)
FILES = Body(media_type=RequestEncodingType.MULTI_PART)


class DatasetsPageController(Controller):
    path = "/"
    include_in_schema = False

    @get("/datasets", name="datasets:list", sync_to_thread=True)
    def list_datasets(self, read_models: ReadModelsDep, identity: Identity) -> Template:
        return Template("datasets/list.html", context=_list_context(read_models, identity))

    @post("/datasets", name="datasets:create", sync_to_thread=True)
    def create(
        self,
        data: Annotated[dict[str, str], FORM],
        verity: Verity,
        own_writes: OwnWritesDep,
        read_models: ReadModelsDep,
        identity: Identity,
    ) -> Template | Redirect:
        if (refused_role := identity.refusal(CHANGE)) is not None:  # the form again, as typed, with why not
            context = _list_context(read_models, identity, name=data.get("name", ""), errors={"": refused_role})
            return Template("datasets/list.html", context=context, status_code=403)
        try:
            written = verity.create_dataset(identity.organization_id, data.get("name", ""), identity.actor)
        except SettingsInvalid as refused:
            context = _list_context(read_models, identity, name=data.get("name", ""), errors=refused.errors)
            return Template("datasets/list.html", context=context, status_code=422)
        return redirect_once_seen(own_writes, written.position, f"/datasets/{written.id}")

    @get("/datasets/{dataset_id:uuid}", name="datasets:detail", sync_to_thread=True)
    def detail(self, dataset_id: UUID, read_models: ReadModelsDep, identity: Identity) -> Template:
        return Template("datasets/detail.html", context=_dataset_context(read_models, identity, dataset_id))

    @get("/datasets/{dataset_id:uuid}/upload", name="datasets:upload-form", sync_to_thread=True)
    def upload_form(self, dataset_id: UUID, read_models: ReadModelsDep, identity: Identity) -> Template:
        return Template("datasets/upload.html", context=_dataset_context(read_models, identity, dataset_id))

    @post(
        "/datasets/{dataset_id:uuid}/versions",
        name="datasets:upload",
        sync_to_thread=True,
        request_max_body_size=UPLOAD_MAX_BYTES,
    )
    def upload(
        self,
        dataset_id: UUID,
        data: Annotated[dict[str, Any], FILES],
        verity: Verity,
        storage: StorageDep,
        own_writes: OwnWritesDep,
        read_models: ReadModelsDep,
        identity: Identity,
    ) -> Template | Redirect:
        org_id = identity.organization_id
        verity.get_dataset(org_id, dataset_id)
        if (refused_role := identity.refusal(CHANGE)) is not None:
            context = _dataset_context(read_models, identity, dataset_id, errors={"": refused_role})
            return Template("datasets/upload.html", context=context, status_code=403)
        try:
            stored = store_version_files(storage, uploaded_files(data))
            written = record_stored_version(verity, storage, stored, org_id, dataset_id, identity.actor)
        except SettingsInvalid as refused:
            context = _dataset_context(read_models, identity, dataset_id, errors=refused.errors)
            return Template("datasets/upload.html", context=context, status_code=422)
        except StorageUnavailable as down:  # the form again, with the words and the files still to choose
            context = _dataset_context(read_models, identity, dataset_id, errors={"": down.message})
            return Template("datasets/upload.html", context=context, status_code=503)
        return redirect_once_seen(own_writes, written.position, f"/dataset-versions/{written.id}")

    @get("/dataset-versions/{version_id:uuid}", name="datasets:version", sync_to_thread=True)
    def version(
        self, version_id: UUID, read_models: ReadModelsDep, storage: StorageDep, identity: Identity
    ) -> Template:
        version = _found(read_models.dataset_version(identity.organization_id, version_id))
        context = {
            **_common(identity),
            "version": version,
            "examples": first_examples(storage, version),
            "shape_name": SHAPE_NAMES.get(version.shape, version.shape),
        }
        return Template("datasets/version.html", context=context)


def _common(identity: Identity) -> dict[str, Any]:
    return {"identity": identity, "section": "datasets", "splits": SPLITS, "split_names": SPLIT_NAMES}


def _list_context(
    read_models: ReadModels, identity: Identity, *, name: str = "", errors: dict[str, str] | None = None
) -> dict[str, Any]:
    org_id = identity.organization_id
    datasets = read_models.datasets(org_id)  # type: ignore[attr-defined]
    latest = {version.id: version for version in read_models.dataset_versions(org_id)}  # type: ignore[attr-defined]
    return {**_common(identity), "datasets": datasets, "latest": latest, "name": name, "errors": errors or {}}


def _dataset_context(
    read_models: ReadModels, identity: Identity, dataset_id: UUID, *, errors: dict[str, str] | None = None
) -> dict[str, Any]:
    org_id = identity.organization_id
    dataset = _found(read_models.dataset(org_id, dataset_id))  # type: ignore[attr-defined]
    return {
        **_common(identity),
        "dataset": dataset,
        "versions": read_models.dataset_versions(org_id, dataset_id),  # type: ignore[attr-defined]
        "shape_names": SHAPE_NAMES,
        "errors": errors or {},
    }


def _found(row: Any) -> Any:
    if row is None:
        raise NotFound("There is no such dataset or version in this organization.")
    return row
