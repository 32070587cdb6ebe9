"""The datasets pages: Datasets (with New dataset), a dataset with its versions, Upload a version, Browse a version.

A refused form comes back with the domain's words under the field they concern (status 422); a write redirects
to what it made, once the read models show it.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Annotated, Any
from uuid import UUID

from litestar import get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Redirect, Template

from app.datasets.browse import first_examples
from app.datasets.dependencies import StorageDep
from app.datasets.schemas import UPLOAD_MAX_BYTES, uploaded_files
from app.datasets.upload import record_stored_version, store_version_files
from app.shell.console import Console, ConsoleController, ConsoleDep
from app.shell.identity import Identity
from domain.access.roles import CHANGE
from domain.datasets.examples import SHAPE_NAMES
from domain.datasets.version import SPLIT_NAMES, SPLITS
from domain.errors import NotFound, SettingsInvalid, StorageUnavailable

FORM = Body(media_type=RequestEncodingType.URL_ENCODED)
FILES = Body(media_type=RequestEncodingType.MULTI_PART)


class DatasetsPageController(ConsoleController):
    path = "/"
    include_in_schema = False

    @get("/datasets", name="datasets:list", sync_to_thread=True)
    def list_datasets(self, console: ConsoleDep) -> Template:
        return _list_page(console)

    @post("/datasets", name="datasets:create", sync_to_thread=True)
    def create(self, data: Annotated[dict[str, str], FORM], console: ConsoleDep) -> Template | Redirect:
        name = data.get("name", "")
        create_dataset = partial(console.verity.create_dataset, console.organization_id, name, console.actor)
        list_again = partial(_list_page, console, name)
        return console.write_from_form(create_dataset, list_again, lambda written: f"/datasets/{written.id}")

    @get("/datasets/{dataset_id:uuid}", name="datasets:detail", sync_to_thread=True)
    def detail(self, dataset_id: UUID, console: ConsoleDep) -> Template:
        return Template("datasets/detail.html", context=_dataset_context(console, dataset_id))

    @get("/datasets/{dataset_id:uuid}/upload", name="datasets:upload-form", sync_to_thread=True)
    def upload_form(self, dataset_id: UUID, console: ConsoleDep) -> Template:
        return Template("datasets/upload.html", context=_dataset_context(console, dataset_id))

    @post(
        "/datasets/{dataset_id:uuid}/versions",
        name="datasets:upload",
        sync_to_thread=True,
        request_max_body_size=UPLOAD_MAX_BYTES,
    )
    def upload(
        self, dataset_id: UUID, data: Annotated[dict[str, Any], FILES], console: ConsoleDep, storage: StorageDep
    ) -> Template | Redirect:
        org_id = console.organization_id
        console.verity.get_dataset(org_id, dataset_id)
        if (refused_role := console.identity.refusal(CHANGE)) is not None:
            return _upload_again(console, dataset_id, {"": refused_role}, 403)
        try:
            stored = store_version_files(storage, uploaded_files(data))
            written = record_stored_version(console.verity, storage, stored, org_id, dataset_id, console.actor)
        except SettingsInvalid as refused:
            return _upload_again(console, dataset_id, refused.errors, 422)
        except StorageUnavailable as down:  # the form again, with the words and the files still to choose
            return _upload_again(console, dataset_id, {"": down.message}, 503)
        return console.redirect_once_seen(written, f"/dataset-versions/{written.id}")

    @get("/dataset-versions/{version_id:uuid}", name="datasets:version", sync_to_thread=True)
    def version(self, version_id: UUID, console: ConsoleDep, storage: StorageDep) -> Template:
        version = _found(console.read_models.dataset_version(console.organization_id, version_id))
        context = {
            **_common(console.identity),
            "version": version,
            "examples": first_examples(storage, version),
            "shape_name": SHAPE_NAMES.get(version.shape, version.shape),
        }
        return Template("datasets/version.html", context=context)


def _common(identity: Identity) -> dict[str, Any]:
    return {"identity": identity, "section": "datasets", "splits": SPLITS, "split_names": SPLIT_NAMES}


def _list_page(
    console: Console, name: str = "", errors: Mapping[str, str] | None = None, status_code: int = 200
) -> Template:
    """Datasets, with New dataset; again with the name as typed and why it was refused, when it was."""
    read_models, org_id = console.read_models, console.organization_id
    datasets = read_models.datasets(org_id)  # type: ignore[attr-defined]
    latest = {version.id: version for version in read_models.dataset_versions(org_id)}  # type: ignore[attr-defined]
    context = {
        **_common(console.identity), "datasets": datasets, "latest": latest, "name": name, "errors": errors or {},
    }
    return Template("datasets/list.html", context=context, status_code=status_code)


def _dataset_context(
    console: Console, dataset_id: UUID, *, errors: Mapping[str, str] | None = None
) -> dict[str, Any]:
    read_models, org_id = console.read_models, console.organization_id
    dataset = _found(read_models.dataset(org_id, dataset_id))  # type: ignore[attr-defined]
    return {
        **_common(console.identity),
        "dataset": dataset,
        "versions": read_models.dataset_versions(org_id, dataset_id),  # type: ignore[attr-defined]
        "shape_names": SHAPE_NAMES,
        "errors": errors or {},
    }


def _upload_again(console: Console, dataset_id: UUID, errors: Mapping[str, str], status_code: int) -> Template:
    """Upload a version again, with why the last try was refused (the files are to choose again)."""
    context = _dataset_context(console, dataset_id, errors=errors)
    return Template("datasets/upload.html", context=context, status_code=status_code)


def _found(row: Any) -> Any:
    if row is None:
        raise NotFound("There is no such dataset or version in this organization.")
    return row
