"""A `gsm8k` run with no dataset version trains on the public GSM8K set, loaded in the worker when the spec is
built: from the hub, from the mirror VERITY_GSM8K_SOURCE names, and, where neither can be reached, the run fails
before any model loads with words that say what to do. An uploaded version in GSM8K's shape is read as any version.
"""

from __future__ import annotations

import json

import pytest

from app.datasets.upload import UploadedFile, record_stored_version, store_version_files
from domain.actors import Actor
from domain.rewards.extract import gsm8k_reference_number
from domain.runs.settings import run_body_from_api
from jobs.config import JobsConfig
from jobs.public_datasets import GSM8K_SOURCE_VARIABLE
from jobs.specs import SpecUnbuildable, build_run_spec
from verity.config import Settings
from verity.storage import open_storage
from verity.wiring import build_application, ensure_default_organization

OWNER = Actor("person", "owner@localhost", "owner@localhost")
GSM8K = {"preset": "verifiable", "metric": "gsm8k"}


def gsm8k_record(number: int) -> dict[str, str]:
    return {
        "question": f"Ann has {number} apples and buys 2 more. How many now?",
        "answer": f"{number} + 2 = <<{number}+2={number + 2}>>{number + 2}\n#### {number + 2}",
    }


@pytest.fixture
def launch_gsm8k(sqlite_settings: Settings):
    """Saves and launches a gsm8k run (on a version when one is given) and builds its spec as a worker would."""
    verity = build_application(sqlite_settings)
    org_id, project_id = ensure_default_organization(sqlite_settings, verity)

    def launch(dataset_version: str | None = None):
        body = {"training": {"rl": {"reward": GSM8K, "rounds": 1}}}
        if dataset_version:
            body["dataset_version"] = dataset_version
        run_id = verity.save_run(org_id, project_id, run_body_from_api(body), OWNER).id
        verity.launch_run(org_id, run_id, OWNER, "owner")
        return build_run_spec(verity, verity.get_run(org_id, run_id), sqlite_settings, JobsConfig())

    launch.verity, launch.org_id = verity, org_id  # type: ignore[attr-defined]
    return launch


def test_where_the_hub_cannot_be_reached_the_run_fails_with_what_to_do(launch_gsm8k, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.delenv(GSM8K_SOURCE_VARIABLE, raising=False)
    with pytest.raises(SpecUnbuildable) as failed:
        launch_gsm8k()
    message = str(failed.value)
    assert message.startswith("GSM8K could not be loaded from openai/gsm8k: ")
    assert message.endswith(
        "Upload a version in GSM8K's shape (question, answer ending in #### N) and choose it as the Dataset version."
    )
    assert "\n" not in message and len(message) < 400  # a short reason, not a traceback


def test_a_local_mirror_gives_rows_whose_references_end_in_the_final_number(launch_gsm8k, monkeypatch, tmp_path):
    mirror = tmp_path / "gsm8k"
    mirror.mkdir()
    for split, numbers in {"train": range(1, 41), "test": range(100, 110)}.items():
        (mirror / f"{split}.jsonl").write_text("".join(json.dumps(gsm8k_record(n)) + "\n" for n in numbers))
    monkeypatch.setenv(GSM8K_SOURCE_VARIABLE, str(mirror))

    spec = launch_gsm8k()

    assert len(spec.train_rows) == 40 and len(spec.validation_rows) == 10  # the test split validates
    first = spec.train_rows[0]
    assert first.prompt == [{"role": "user", "content": gsm8k_record(1)["question"]}]
    assert gsm8k_reference_number(first.reference) == 3
    assert [gsm8k_reference_number(row.reference) for row in spec.validation_rows] == list(range(102, 112))


def test_a_single_jsonl_mirror_holds_a_seeded_validation_sample_out_of_training(monkeypatch, tmp_path):
    from jobs.public_datasets import gsm8k_public_rows

    mirror = tmp_path / "gsm8k.jsonl"
    mirror.write_text("".join(json.dumps(gsm8k_record(n)) + "\n" for n in range(200)))
    train, validation = gsm8k_public_rows(7, source=str(mirror))
    assert (len(train), len(validation)) == (72, 128)
    assert not {row["reference"] for row in train} & {row["reference"] for row in validation}
    assert gsm8k_public_rows(7, source=str(mirror)) == (train, validation)  # the same seed, the same sample


def test_an_uploaded_version_in_gsm8ks_shape_is_what_the_run_trains_on(launch_gsm8k, sqlite_settings, tmp_path):
    files = {}
    for split, numbers in {"train": range(1, 6), "validation": range(50, 53)}.items():
        path = tmp_path / f"{split}.jsonl"
        path.write_text("".join(json.dumps(gsm8k_record(n)) + "\n" for n in numbers))
        files[split] = UploadedFile(path.name, path.open("rb"))
    verity, org_id = launch_gsm8k.verity, launch_gsm8k.org_id
    storage = open_storage(sqlite_settings)
    dataset_id = verity.create_dataset(org_id, "gsm8k-mini", OWNER).id
    stored = store_version_files(storage, files)
    version = record_stored_version(verity, storage, stored, org_id, dataset_id, OWNER)

    spec = launch_gsm8k(str(version.id))

    assert [gsm8k_reference_number(row.reference) for row in spec.train_rows] == [3, 4, 5, 6, 7]
    assert [gsm8k_reference_number(row.reference) for row in spec.validation_rows] == [52, 53, 54]
