"""How a setting of a run is described: its label, kind, bounds and hint, the form's section that shows it, the
block of the API body that holds it, the objectives that use it, and the words that state its bounds.

`RunSettings` (domain/runs/run_settings.py) declares each setting once, with `setting(...)`: its default is the
dataclass field's, everything else this `FieldSpec`. The form, the API body, the parsers' messages and the
trainer's spec all read that one declaration. The bounds are PRODUCT.md's "Numbers the documents left out"; a
message names the field by its form label and states what is allowed, so the form and the API say the same.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["int", "float", "choice", "text"]
Section = Literal["Run", "Reinforcement learning", "SFT and DPO", "Reward", "Advanced settings"]
# Where the API body holds a setting: beside `training` ("body"), in it, in its `rl` or `advanced` block, or in
# the block of the objective that uses it (`training.sft`, `training.dpo`, `training.head`).
Block = Literal["body", "training", "rl", "advanced", "objective"]
_SPEC = "spec"


@dataclass(frozen=True)
class FieldSpec:
    name: str
    label: str
    kind: Kind
    default: Any
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[tuple[str, str], ...] = ()  # (value, label)
    hint: str = ""
    section: Section | None = None  # None: the page draws it itself (Name, Run, Dataset version, Baseline ...)
    optional: bool = False  # None (empty in the form) is allowed
    above_minimum: bool = False  # the value must be above `minimum`, not equal to it
    block: Block = "advanced"
    objectives: tuple[str, ...] = ()  # the objectives that use it; () for every one
    key: str = ""  # its name in its block of the API body where that differs from its own (RL's Epochs: "epochs")

    @property
    def api_key(self) -> str:
        return self.key or self.name

    def bounds_message(self) -> str:
        if self.above_minimum:
            empty = ", or empty for no limit" if self.optional else ""
            return f"{self.label} must be a number above {_number(self.minimum)}{empty}."
        if self.kind == "choice":
            return f"{self.label} must be one of: {', '.join(value for value, _ in self.choices)}."
        if self.kind == "text":
            return f"{self.label} must be at most {_number(self.maximum)} characters."
        noun = "a whole number" if self.kind == "int" else "a number"
        return f"{self.label} must be {noun} from {_number(self.minimum)} to {_number(self.maximum)}."

    def range_words(self) -> str:
        """The bounds of a number as a person reads them: "1 - 1,000", "1e-7 - 1e-3"."""
        return f"{_number(self.minimum)} - {_number(self.maximum)}"

    def default_words(self) -> str:
        return _number(self.default) if isinstance(self.default, int | float) else str(self.default)

    def used_by(self, objective: str) -> bool:
        return not self.objectives or objective in self.objectives


def setting(
    default: Any, label: str, kind: Kind, minimum: float | None = None, maximum: float | None = None, **described: Any
) -> Any:
    """A field of `RunSettings`: its default, and its description (a FieldSpec, named when `specs_of` reads it)."""
    spec = FieldSpec("", label, kind, default, minimum, maximum, **described)
    return dataclasses.field(default=default, metadata={_SPEC: spec})


def specs_of(settings_class: type) -> list[FieldSpec]:
    """The FieldSpec of every field declared with `setting`, in the order the class declares them."""
    return [
        dataclasses.replace(field.metadata[_SPEC], name=field.name)
        for field in dataclasses.fields(settings_class)
        if _SPEC in field.metadata
    ]


def _number(value: float | None) -> str:
    """1000 -> "1,000", 1e-07 -> "1e-7", 0.95 -> "0.95"."""
    if value is None:
        return ""
    if value != 0 and abs(value) < 0.001 + 1e-12:
        mantissa, exponent = f"{value:.0e}".split("e")
        return f"{mantissa}e{int(exponent)}"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:g}"
