"""Who did something: a person, an API token or the system (jobs, the reconciler). Every event records one."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

ActorKind = Literal["person", "token", "system"]


@dataclass(frozen=True)
class Actor:
    kind: ActorKind
    id: str
    name: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Actor:
        return cls(kind=data["kind"], id=data["id"], name=data["name"])


# The actor of progress records that arrive from a training job when the caller names no other.
TRAINER = Actor("system", "trainer", "Trainer")
