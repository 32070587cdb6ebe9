"""The supervisor's recorder turns an SFT run's step_logged records into StepLogged events, then its adapter."""

from __future__ import annotations

from dataset_versions import recorded_version

from domain.actors import Actor
from domain.application import Verity
from domain.runs.settings import run_body_from_api
from jobs.recording import ProgressRecorder
from trainer import progress

OWNER = Actor("person", "owner@localhost", "owner@localhost")


def test_step_records_become_steps_and_the_run_completes_with_its_adapter():
    verity = Verity(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    org_id = verity.create_organization("Acme", "free", OWNER).id
    project_id = verity.create_project(org_id, "Demo", "tiny-math", None, False, OWNER).id
    dataset_id = verity.create_dataset(org_id, "math", OWNER).id
    version_id = recorded_version(verity, org_id, dataset_id, OWNER, storage_key="datasets/m")
    draft = run_body_from_api({"name": "sft", "dataset_version": str(version_id), "training": {"objective": "sft"}})
    run_id = verity.save_run(org_id, project_id, draft, OWNER).id
    verity.launch_run(org_id, run_id, OWNER, "member")
    verity.record_preparing(run_id)
    recorder = ProgressRecorder(verity, run_id)
    for record in (
        progress.StepLogged(1, 2, 0.5, 2.0, 1.0),
        progress.StepLogged(2, 2, 1.0, 1.5, 2.0, validation_loss=1.4),
        progress.AdapterSaved("runs/x/adapter", "cd" * 32, 4321, 2),
        progress.Completed(2, 2, -1.4),
    ):
        recorder.record(record)
    run = verity.get_run(org_id, run_id)
    assert run.status == "Completed" and run.adapter["size_bytes"] == 4321
    assert [step["validation_loss"] for step in run.steps] == [None, 1.4]
