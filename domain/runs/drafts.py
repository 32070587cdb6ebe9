"""What editing, duplicating and starting a draft from another run change, in the words the console shows."""

from __future__ import annotations

from typing import Any

from domain.runs.run_settings import FIELDS_BY_NAME, SPECS, RunSettings

NAME_LIMIT = int(FIELDS_BY_NAME["name"].maximum or 0)  # a run's name, as saving checks it
COPY_SUFFIX = " (copy)"
ADAPTER_SHAPE = ("lora_rank", "lora_alpha")  # what a run that continues an adapter takes from it
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


def changed_settings(before: RunSettings, after: RunSettings) -> list[str]:
    """The labels of the settings an edit changed, in the form's order: Name, Run, Dataset version, Baseline, the
    form's fields, then Training provider. A setting the saved body does not hold (another objective's), or that
    the run's objective does not use (an SFT run's Rounds), counts as none.

    >>> changed_settings(RunSettings(), RunSettings(name="x", rounds=3))
    ['Name', 'Rounds']
    """
    return [spec.label for spec in SPECS if _saved_value(before, spec.name) != _saved_value(after, spec.name)]


def _saved_value(settings: RunSettings, name: str) -> Any:
    used = settings.saves(name) and FIELDS_BY_NAME[name].used_by(settings.objective)
    return getattr(settings, name) if used else None


def adapter_locked_problems(given: RunSettings, source: RunSettings) -> dict[str, str]:
    """000: with Start from, "Adapter size (LoRA rank) and Adapter scaling (LoRA alpha) take the source run's
    values and can't be changed". Only a value `given` named is refused (a left-out one takes the source's)."""
    problems = {}
    for name in ADAPTER_SHAPE:
        value = getattr(source, name)
        if name in given.given and getattr(given, name) != value:
            words = ADAPTER_LOCKED.format(label=FIELDS_BY_NAME[name].label, value=value,
                                          run=source.name or "Untitled run")
            problems[name] = words if name == "lora_rank" else words.replace("adapter size", "adapter scaling")
    return problems
