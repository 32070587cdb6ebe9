"""What sets compared runs apart: their settings side by side (those that differ first, in the form's words), and
whether a prompt number names the same prompt in each of them.

Pure functions of the runs' settings; the caller gives the words a setting's value alone cannot give (the reward's
label, the name of the run a run started from, a dataset version's name).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from domain.runs.fields import FieldSpec
from domain.runs.objectives import RL
from domain.runs.reward import makes_own_prompts
from domain.runs.run_settings import SPECS, RunSettings

NOT_USED = "—"  # a setting the run's objective has no use for (an SFT run's Rounds), or one left empty
# The name tells runs apart by itself; it is no setting of how they train.
LEFT_OUT = ("name",)
COMPARED: tuple[FieldSpec, ...] = tuple(spec for spec in SPECS if spec.name not in LEFT_OUT)


@dataclass(frozen=True)
class ComparedSetting:
    """One setting of the compared runs: its name in the form's words and its value in each run, in their order."""

    name: str
    label: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class SettingsCompared:
    differing: list[ComparedSetting]
    shared: list[ComparedSetting]


def settings_compared(
    runs: Sequence[RunSettings], words: Sequence[Mapping[str, str]] | None = None
) -> SettingsCompared:
    """The settings that differ between `runs`, then those they share, each in the form's order. `words` (one
    mapping a run) words a setting's value where the value alone says little (a reward's label).

    A setting no run's objective uses is left out; one that some use and others don't differs.

    >>> compared = settings_compared([RunSettings(learning_rate=5e-4), RunSettings(learning_rate=1e-5)])
    >>> [(s.label, s.values) for s in compared.differing]
    [('Learning rate', ('0.0005', '1e-05'))]
    >>> "Seed" in [s.label for s in compared.shared]
    True
    """
    words = words or [{} for _ in runs]
    differing: list[ComparedSetting] = []
    shared: list[ComparedSetting] = []
    for spec in COMPARED:
        used = [spec.used_by(run.objective) for run in runs]
        if not any(used):
            continue
        raw = [getattr(run, spec.name) if uses else _NOT_USED_MARK for run, uses in zip(runs, used, strict=True)]
        texts = [
            NOT_USED if not uses else run_words.get(spec.name) or worded(spec, value)
            for value, uses, run_words in zip(raw, used, words, strict=True)
        ]
        differs = any(value != raw[0] for value in raw[1:])
        if differs and spec.name == "reward" and len(set(texts)) < len(texts):
            # two rewards of one label (Math Pairs of 16 and of 64 prompts): the label alone would not tell them apart
            texts = [f"{text} ({_details(value)})" if isinstance(value, dict) else text
                     for text, value in zip(texts, raw, strict=True)]
        setting = ComparedSetting(spec.name, spec.label, tuple(texts))
        (differing if differs else shared).append(setting)
    return SettingsCompared(differing, shared)


class _NotUsed:
    """A setting's place in a run whose objective has no use for it: equal only to itself."""

    def __repr__(self) -> str:
        return "not used"


_NOT_USED_MARK = _NotUsed()


def worded(spec: FieldSpec, value: Any) -> str:
    """A setting's value as the form shows it: a choice by its label, a number without trailing zeros.

    >>> from domain.runs.run_settings import FIELDS_BY_NAME
    >>> worded(FIELDS_BY_NAME["loss_type"], "dr_grpo"), worded(FIELDS_BY_NAME["time_limit_hours"], 2.0)
    ('Dr. GRPO', '2')
    """
    if value is None or value == "":
        return NOT_USED
    if spec.choices:
        return dict(spec.choices).get(value, str(value))
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict):
        return _details(value)
    return str(value)


def _details(settings: Mapping[str, Any]) -> str:
    return ", ".join(f"{key} {value}" for key, value in sorted(settings.items()) if value not in (None, ""))


def prompts_apart(runs: Sequence[RunSettings]) -> str | None:
    """Why a prompt number would not name the same prompt in each run (None when it does): the runs must draw
    from the same training prompts, which Math Pairs makes from the run's Seed and the other rewards read from the
    Dataset version (or the reward's public set).

    >>> prompts_apart([RunSettings(learning_rate=5e-4), RunSettings(learning_rate=1e-5)]) is None
    True
    >>> prompts_apart([RunSettings(seed=1), RunSettings(seed=2)]).startswith("Math Pairs makes its training prompts")
    True
    """
    if any(run.objective != RL for run in runs):
        return "Only RL runs draw training prompts round by round: no prompt is compared."
    sources = {_prompt_source(run) for run in runs}
    if len(sources) == 1:
        return None
    if all(source[0] == "math_pairs" for source in sources) and len({source[2] for source in sources}) == 1:
        return ("Math Pairs makes its training prompts from the run's Seed, and these runs' Seeds differ: a prompt "
                "number names a different prompt in each, so no prompt is compared.")
    return ("These runs train on different prompts (their Dataset version or Reward differ): a prompt number names "
            "a different prompt in each, so no prompt is compared.")


def _prompt_source(run: RunSettings) -> tuple[str, Any, Any]:
    """Where a run's training prompts come from (domain/runs/reward.py's training_prompts): Math Pairs' own, made
    from the Seed (also what a run with neither a Dataset version nor GSM8K trains on), or a set of rows."""
    reward = run.reward or {}
    if makes_own_prompts(reward) or not (run.dataset_version or reward.get("metric") == "gsm8k"):
        return ("math_pairs", run.seed, reward.get("synthetic_prompts"))
    return ("rows", run.dataset_version, None if run.dataset_version else reward.get("metric"))
