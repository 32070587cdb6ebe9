"""What editing, duplicating and starting a draft from another run change, in the words the console shows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from domain.runs.settings import ALL_FIELDS

NAME_LIMIT = 200  # a run's name, as saving checks it
COPY_SUFFIX = " (copy)"
TOP_LABELS = {
    "name": "Name",
    "kind": "Run",
    "dataset_version": "Dataset version",
    "baseline": "Baseline",
}
ADAPTER_LOCKED = (
    "{label} is {value}, the adapter size of “{run}”, which this run starts from: a run that continues an adapter "
    "keeps its size and scaling. Leave it out, or give {value}."
)


def copy_name(name: str) -> str:
    """Duplicate names the copy after its source: "math pairs" -> "math pairs (copy)", within the name's limit.

    >>> copy_name("math pairs"), copy_name("")
    ('math pairs (copy)', 'Untitled run (copy)')
    """
    base = name.strip() or "Untitled run"
    return base[: NAME_LIMIT - len(COPY_SUFFIX)] + COPY_SUFFIX


def changed_settings(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """The labels of the settings an edit changed, in the form's order (both are `RunDraft.to_api()` bodies).

    >>> from domain.runs.settings import RunDraft
    >>> changed_settings(RunDraft().to_api(), RunDraft(name="x", rounds=3).to_api())
    ['Name', 'Rounds']
    """
    changed = [label for key, label in TOP_LABELS.items() if before.get(key) != after.get(key)]
    old, new = _flat(before), _flat(after)
    changed += [spec.label for spec in ALL_FIELDS if old.get(spec.name) != new.get(spec.name)]
    if old.get("provider") != new.get("provider"):
        changed.append("Training provider")
    return changed


def _flat(body: Mapping[str, Any]) -> dict[str, Any]:
    """Every setting of a saved body by its field name, whatever block holds it."""
    training = body.get("training") or {}
    values = {key: value for key, value in training.items() if not isinstance(value, dict)}
    for block in training.values():
        if isinstance(block, dict):
            values.update(block)
    return values


def adapter_locked_problems(
    given: Mapping[str, int], source_name: str, source_rank: int, source_alpha: int
) -> dict[str, str]:
    """000: with Start from, "Adapter size (LoRA rank) and Adapter scaling (LoRA alpha) take the source run's
    values and can't be changed". `given`: the values the body or form named (a left-out one takes the source's)."""
    problems = {}
    for name, label, value in (
        ("lora_rank", "Adapter size (LoRA rank)", source_rank),
        ("lora_alpha", "Adapter scaling (LoRA alpha)", source_alpha),
    ):
        if name in given and given[name] != value:
            words = ADAPTER_LOCKED.format(label=label, value=value, run=source_name or "Untitled run")
            problems[name] = words if name == "lora_rank" else words.replace("adapter size", "adapter scaling")
    return problems
