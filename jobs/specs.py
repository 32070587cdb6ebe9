"""From a launched run in the event store to the trainer's run spec: rows, reward, starting adapter, deadline, and
the settings it trains with (`training_spec`: the one place a run's typed settings become the trainer's numbers).

A run on a dataset version trains on the version's training rows and validates on its validation rows, read from
the storage; a `gsm8k` run with no dataset version trains on the public GSM8K set (jobs/public_datasets.py), and
any other run with none on the built-in Math Pairs prompts (001's synthetic task, generated from the run's seed),
as does a Math Pairs run that names a version ("the Dataset field above is ignored")."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from domain.application import Verity
from domain.custom_metrics import CustomMetricVersion
from domain.datasets.upload import RL_REFUSES_IMAGES
from domain.errors import NotFound
from domain.rewards.config import SYNTHETIC_PROMPTS_DEFAULT
from domain.rewards.verifiable import math_pairs_rows
from domain.runs.reward import makes_own_prompts
from domain.runs.run import Run
from domain.runs.run_settings import DEFAULT_REVISION, VALIDATION_SAMPLE, RunSettings, saved_revision
from jobs.config import JobsConfig
from jobs.public_datasets import PublicSetUnreachable, gsm8k_public_rows
from jobs.run_storage import server_storage
from trainer.spec import FullRun, ModelRef, ResumeFrom, RewardSpec, Row, RunSpec, StartAdapter, Storage
from verity.config import Settings
from verity.storage import open_storage as open_file_storage
from verity.storage import read_rows


class SpecUnbuildable(Exception):
    """The run can't start; the message is the run's failure, in the user's words."""


def launched_at(verity: Verity, run_id: UUID) -> float:
    """When the run was launched, or last continued (its Time limit counts from then), as seconds since the epoch.
    A run resumed after its worker was lost keeps counting from its launch."""
    for stored in verity.repository.event_store.get(run_id, desc=True):
        if type(stored).__name__ in ("Launched", "Continued"):
            return stored.timestamp.timestamp()
    raise SpecUnbuildable("The run was never launched, so it has no time limit to count from.")


def deadline_of(verity: Verity, run: Run, config: JobsConfig) -> float:
    """Launch (or Continue) + the Time limit; a trial's limit is its Minutes, or the Time limit when that is lower."""
    return launched_at(verity, run.id) + run.settings.time_limit_seconds * config.time_limit_scale


def storage_of(settings: Settings) -> Storage:
    """The server's default storage (VERITY_STORAGE_URL, else the data folder); a run's own is jobs/run_storage.py's."""
    return server_storage(settings).storage


def build_run_spec(
    verity: Verity,
    run: Run,
    settings: Settings,
    config: JobsConfig,
    price_per_hour: float | None = None,
    storage: Storage | None = None,
) -> RunSpec:
    """The spec the trainer reads; raises SpecUnbuildable with the failure's words. `storage`: where the run's
    files go (its organization's storage; the server's default when None). It names a place, never a secret."""
    chosen = run.settings
    reward = dict(chosen.reward or {})
    if chosen.dataset_version and not makes_own_prompts(reward):  # Math Pairs ignores the version (001)
        train_rows, validation_rows = dataset_rows(verity, run, settings)
    elif reward.get("preset") == "verifiable" and reward.get("metric") == "gsm8k":
        train_rows, validation_rows = public_gsm8k_rows(chosen.seed)
    else:
        count = int(reward.get("synthetic_prompts") or SYNTHETIC_PROMPTS_DEFAULT)
        # a fixed validation sample of up to 128 prompts (000), and never more than the task's own prompts
        train_rows, validation_rows = math_pairs_rows(
            chosen.seed, count, validation_count=min(count, VALIDATION_SAMPLE)
        )
    return RunSpec(
        run_id=str(run.id),
        model=ModelRef(path_or_id=run.model, revision=run_revision(verity, run)),
        reward=_reward_spec(verity, run.org_id, reward),
        train_rows=[Row(prompt=list(r["prompt"]), reference=r["reference"]) for r in train_rows],
        validation_rows=[Row(prompt=list(r["prompt"]), reference=r["reference"]) for r in validation_rows],
        storage=storage or storage_of(settings),
        deadline=deadline_of(verity, run, config),
        start_adapter=_start_adapter(verity, run),
        resume=ResumeFrom(**run.resume_from) if run.resume_from else None,
        **training_spec(chosen, price_per_hour),
    )


def training_spec(chosen: RunSettings, price_per_hour: float | None = None) -> dict[str, Any]:
    """What the trainer trains with, as RunSpec's settings: the run's, with the trial's rule applied here (one round
    of at most 8 prompts, validated on at most 8), so the trainer never applies it, and a trial's full run for its
    report (`price_per_hour`: the GPU's, for the trial's cost)."""
    full_run = FullRun(
        rounds=chosen.rounds,
        prompts_per_round=chosen.prompts_per_round,
        validation_sample_size=VALIDATION_SAMPLE,
        time_limit_hours=chosen.time_limit_hours,
        price_per_hour=price_per_hour,
    )
    return {
        "rounds": chosen.effective_rounds,
        "prompts_per_round": chosen.effective_prompts_per_round,
        "validation_sample_size": chosen.effective_validation_prompts,
        "answers_per_prompt": chosen.answers_per_prompt,
        "max_answer_tokens": chosen.max_answer_tokens,
        "learning_rate": chosen.learning_rate,
        "training_window": chosen.training_window,
        "micro_batch_size": chosen.micro_batch_size,
        "lora_rank": chosen.lora_rank,
        "lora_alpha": chosen.lora_alpha,
        "loss_type": chosen.loss_type,
        "generation_backend": None if chosen.generation_backend == "auto" else chosen.generation_backend,
        "vllm_gpu_memory": chosen.vllm_gpu_memory,
        "quantization": chosen.quantization,
        "seed": chosen.seed,
        "epochs": chosen.rl_epochs,
        "clip_low": chosen.clip_low,
        "clip_high": chosen.clip_high,
        "max_grad_norm": chosen.max_grad_norm,
        "full_run": full_run if chosen.is_trial else None,
    }


def dataset_rows(verity: Verity, run: Run, settings: Settings) -> tuple[list[dict], list[dict]]:
    """The version's training and validation rows as stored ({"prompt", "reference"}); test rows are never read."""
    try:
        version = verity.get_dataset_version(run.org_id, UUID(str(run.settings.dataset_version)))
    except (ValueError, NotFound):
        raise SpecUnbuildable("The run's dataset version no longer exists in this organization.") from None
    if version.has_images:
        raise SpecUnbuildable(RL_REFUSES_IMAGES)
    storage = open_file_storage(settings)
    try:
        train = list(read_rows(storage, version.storage_key, "train"))
        validation = list(read_rows(storage, version.storage_key, "validation"))
    except Exception as error:  # the storage's own error: name it, since the person fixes the storage
        raise SpecUnbuildable(
            f"The files of {version.label} could not be read from the storage ({type(error).__name__}). Check "
            "the storage connection, then Retry."
        ) from error
    if not train or not validation:
        raise SpecUnbuildable(
            f"RL needs training and validation examples; the storage holds none of {version.label}'s "
            f"{'training' if not train else 'validation'} examples."
        )
    return train, validation


def public_gsm8k_rows(seed: int | str) -> tuple[list, list]:
    """The public GSM8K set (or its mirror); where the worker can't reach it, the run fails before the model loads."""
    try:
        return gsm8k_public_rows(seed)
    except PublicSetUnreachable as unreachable:
        raise SpecUnbuildable(str(unreachable)) from None


def run_revision(verity: Verity, run: Run) -> str | None:
    """The revision the run saved (the project's, or main, for a run saved before runs had one). main goes as
    None: what transformers loads of a hub id by default; a local folder ignores the revision either way."""
    revision = saved_revision(run.settings, _project_revision(verity, run))
    return None if revision == DEFAULT_REVISION else revision


def _project_revision(verity: Verity, run: Run) -> str | None:
    try:
        return verity.get_project(run.org_id, run.project_id).revision
    except NotFound:
        return None


def _reward_spec(verity: Verity, org_id: UUID, reward: dict[str, Any]) -> RewardSpec:
    version_id = reward.get("custom_metric")
    if not version_id:
        return RewardSpec(config=reward)
    metric = _custom_metric(verity, org_id, version_id)
    return RewardSpec(
        config=reward,
        custom_metric_source=metric.source,
        custom_metric_name=metric.name,
        custom_metric_version=str(metric.number),
    )


def _custom_metric(verity: Verity, org_id: UUID, version_id: str) -> CustomMetricVersion:
    """The version the run was saved with: archiving it later leaves a saved run alone (000)."""
    try:
        return verity.get_custom_metric_version(org_id, UUID(str(version_id)))
    except (ValueError, NotFound):
        raise SpecUnbuildable(
            f"The reward's custom metric version {version_id} is not registered in this organization. Choose "
            "another reward metric."
        ) from None


def _start_adapter(verity: Verity, run: Run) -> StartAdapter | None:
    """The source run's adapter with the checksum and size saved with it; the trainer checks both."""
    start_run = run.settings.start_run
    if not start_run:
        return None
    try:
        source = verity.get_run(run.org_id, UUID(str(start_run)))
    except (NotFound, ValueError):
        raise SpecUnbuildable("The run it starts from no longer exists, so its adapter can't be read.") from None
    if source.adapter is None:
        raise SpecUnbuildable("The run it starts from has no adapter to continue.")
    return StartAdapter(
        path=source.adapter["location"],
        sha256=source.adapter["sha256"],
        size_bytes=int(source.adapter["size_bytes"]),
    )
