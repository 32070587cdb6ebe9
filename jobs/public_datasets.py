"""The public GSM8K set, loaded in the worker for a `gsm8k` run that names no dataset version (001).

The source is `openai/gsm8k` (config `main`) on the hub, or what VERITY_GSM8K_SOURCE names for operators who mirror
it: another hub id, a local folder of `train.jsonl` and `test.jsonl` (or any files `datasets` reads as splits), or a
single JSONL file. Training rows come from the train split; the validation sample is the first rows of the test
split, or, where the source has no test split, a sample of the train split drawn from the run's seed and held out
of training. `datasets` is imported here, when a run needs it, never when the jobs are imported: the web process
imports jobs/ and must stay light.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

from domain.rewards.verifiable import VALIDATION_PROMPTS, Row, RowsInvalid, gsm8k_rows

GSM8K_SOURCE_VARIABLE = "VERITY_GSM8K_SOURCE"
GSM8K_HUB_ID = "openai/gsm8k"
GSM8K_HUB_CONFIG = "main"


class PublicSetUnreachable(Exception):
    """The public set could not be loaded; the message says what to do, in the user's words."""


def gsm8k_source(environ: dict[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    return env.get(GSM8K_SOURCE_VARIABLE, "").strip() or GSM8K_HUB_ID


def gsm8k_public_rows(
    seed: int | str, *, source: str | None = None, validation_count: int = VALIDATION_PROMPTS
) -> tuple[list[Row], list[Row]]:
    """(training rows, validation rows of up to `validation_count`) from the public set or its mirror."""
    source = source or gsm8k_source()
    try:
        splits = _load_splits(source)
        train = gsm8k_rows(splits["train"])
        test = gsm8k_rows(splits["test"]) if "test" in splits else None
    except RowsInvalid as invalid:
        reason = f"its records are not in GSM8K's shape ({invalid.message.rstrip('.')})"
        raise PublicSetUnreachable(_unreachable(source, reason)) from None
    except Exception as error:  # the hub's or the files' own error: its first line is the reason to show
        raise PublicSetUnreachable(_unreachable(source, _short_reason(error))) from error
    if not train:
        raise PublicSetUnreachable(_unreachable(source, "its train split is empty"))
    if test:
        return train, test[:validation_count]
    # no test split: hold a seeded sample of the train split out for validation, leaving at least one to train on
    held_out = min(validation_count, len(train) - 1)
    chosen = set(random.Random(f"gsm8k:{seed}").sample(range(len(train)), held_out))
    return [row for i, row in enumerate(train) if i not in chosen], [train[i] for i in sorted(chosen)]


def _load_splits(source: str) -> dict[str, Any]:
    import datasets  # lazily: heavy, and only a worker building a gsm8k run needs it

    path = Path(source).expanduser()
    if path.is_file():
        loaded = datasets.load_dataset("json", data_files={"train": str(path)})
    elif path.is_dir():
        loaded = datasets.load_dataset(str(path))
    else:
        loaded = datasets.load_dataset(source, GSM8K_HUB_CONFIG)
    return {name: loaded[name] for name in ("train", "test") if name in loaded}


def _unreachable(source: str, reason: str) -> str:
    return (
        f"GSM8K could not be loaded from {source}: {reason}. Upload a version in GSM8K's shape (question, answer "
        "ending in #### N) and choose it as the Dataset version."
    )


def _short_reason(error: Exception) -> str:
    lines = str(error).strip().splitlines()
    reason = lines[0].rstrip(".") if lines else type(error).__name__
    return reason if len(reason) <= 200 else reason[:197] + "..."
