"""An agent names a dataset version by its id or its label; a name that matches nothing goes on to the domain,
which refuses it in its own words."""

from __future__ import annotations

from types import SimpleNamespace
from uuid import uuid4

from app.agent.lookups import dataset_version_id


def test_a_version_is_found_by_its_id_or_its_label_and_an_unknown_name_goes_on_as_it_was():
    version = SimpleNamespace(id=uuid4(), label="gsm8k-mini v3")
    read_models = SimpleNamespace(dataset_versions=lambda org_id: [version])
    assert dataset_version_id(read_models, uuid4(), "GSM8K-mini v3") == str(version.id)
    assert dataset_version_id(read_models, uuid4(), f" {version.id} ") == str(version.id)
    assert dataset_version_id(read_models, uuid4(), "gsm8k-mini v9") == "gsm8k-mini v9"
    assert dataset_version_id(read_models, uuid4(), "") is None
    assert dataset_version_id(read_models, uuid4(), None) is None
