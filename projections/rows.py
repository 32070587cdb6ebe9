"""The rows the console reads: frozen dataclasses built from the read-model tables."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field, fields
from functools import cache, cached_property
from typing import Any, TypeVar, get_type_hints
from uuid import UUID

from domain.runs import messages
from domain.runs.objectives import OBJECTIVE_NAMES, RL
from domain.runs.run_resume import CONTINUABLE_STOPS
from domain.runs.run_settings import RunSettings

RowT = TypeVar("RowT", bound=Hashable)  # a frozen dataclass


def read_row(row_class: type[RowT], row: Mapping[str, Any], **computed: Any) -> RowT:
    """A frozen row from a table's row: each field from the column of its name, as its type reads it (a UUID from
    its text, an optional UUID None when empty, a bool from SQL's 0 or 1); `computed` fields are given instead. A
    column the row lacks leaves its field's default, and a column the class has no field for is not read."""
    names, conversions, at_once = _readers(row_class)
    # the columns as they are, then the few that need reading (a run page reads 1,000 rounds of ~30 columns each)
    values = {name: value for name, value in row.items() if name in names}
    for name, read in conversions:
        if name in values:
            values[name] = read(values[name])
    values.update(computed)
    # every field given: made at once (the Prompts tab's first viewer of a long run reads 4,000 histories)
    return frozen_from(row_class, values) if at_once and len(values) == len(names) else row_class(**values)


def frozen_from(row_class: type[RowT], values: dict[str, Any]) -> RowT:
    """A frozen row made from its fields' values all at once, where `values` names every field (a table's columns
    read for them), the class has no __post_init__ and no __slots__: a frozen dataclass's __init__ sets its fields
    one by one through object.__setattr__, 3 us for a round's 30, and a run page reads a run's 1,000 rounds.

    >>> frozen_from(OrganizationRow, {"id": None, "name": "Acme", "plan": "team", "created_at": "2026"}) == (
    ...     OrganizationRow(None, "Acme", "team", "2026"))
    True
    """
    row = object.__new__(row_class)
    row.__dict__.update(values)
    return row


@cache
def _readers(row_class: type) -> tuple[frozenset[str], tuple[tuple[str, Callable[[Any], Any]], ...], bool]:
    """The class's field names, those whose column is read by a function (UUIDs, bools), and whether a row with
    every field given may be made at once (frozen_from: the class checks nothing after its fields are set, and its
    rows keep their fields in a __dict__)."""
    hints = get_type_hints(row_class)
    readers = [(f.name, _reader(hints[f.name])) for f in fields(row_class)]
    return (frozenset(name for name, _ in readers), tuple((n, r) for n, r in readers if r is not _as_it_is),
            not hasattr(row_class, "__post_init__") and "__slots__" not in vars(row_class))


def _as_it_is(value: Any) -> Any:
    return value


def _reader(hint: Any) -> Callable[[Any], Any]:
    if hint is UUID:
        return UUID
    if hint == UUID | None:
        return lambda value: UUID(value) if value else None
    if hint is bool:
        return bool
    return _as_it_is


@dataclass(frozen=True)
class OrganizationRow:
    id: UUID
    name: str
    plan: str
    created_at: str


@dataclass(frozen=True)
class ProjectRow:
    id: UUID
    org_id: UUID
    name: str
    model: str
    revision: str | None
    vision: bool
    created_at: str
    run_defaults: dict[str, Any] = field(default_factory=dict)  # the Configure form's starting values


@dataclass(frozen=True)
class RunRow:
    id: UUID
    org_id: UUID
    project_id: UUID
    name: str
    kind: str  # "full" | "trial"
    state: str  # draft, queued, preparing, training, saving_adapter, adapter_ready, completed, failed, cancelled
    status_line: str  # "Training · round 3 / 20"
    rounds_total: int
    rounds_done: int  # rounds after round 0 that were scored
    best_round: int | None
    best_validation: float | None
    reward_label: str  # "" for SFT and DPO, which have no reward
    created_at: str
    updated_at: str
    objective: str = "rl"  # "rl" | "sft" | "dpo" | "head"
    steps_logged: int = 0  # SFT, DPO and Head: optimizer steps done, of steps_total (None until the first)
    steps_total: int | None = None

    @property
    def objective_name(self) -> str:
        """As the Runs list names it: "RL", "SFT", "DPO", "Head"."""
        return OBJECTIVE_NAMES.get(self.objective, self.objective.upper())


def continues_from(state: str, kind: str, objective: str, stop_reason: str | None, retried_as: Any,
                   rounds_done: int) -> int | None:
    """The N of "Continue from round N": the last round of a full RL run stopped by its time limit or out of memory,
    or cancelled, once it trained a round; None when it has no Continue (the domain checks the rest, its checkpoint:
    domain/runs/run_resume.py).

    >>> continues_from("cancelled", "full", "rl", None, None, 12)
    12
    >>> continues_from("adapter_ready", "full", "rl", "metric_failures", None, 12) is None
    True
    """
    stopped = state == "adapter_ready" and stop_reason in CONTINUABLE_STOPS
    if not (stopped or state == "cancelled") or retried_as is not None or rounds_done < 1:
        return None
    return rounds_done if kind == "full" and objective == RL else None


@dataclass(frozen=True)
class RunDetail:
    id: UUID
    org_id: UUID
    project_id: UUID
    model: str
    name: str
    kind: str
    state: str
    status_line: str
    settings: dict[str, Any]  # the API body (RunSettings.to_api()) with every default filled: what the API answers
    reward_label: str
    start_run: UUID | None
    rounds_total: int
    rounds_done: int
    progress: float  # share of rounds done, 0..1
    best_round: int | None
    best_validation: float | None
    adapter: dict[str, Any] | None  # best_round, location, sha256, size_bytes
    ended: str | None  # how the run ended, the line under the chart
    note: str | None  # the run's own words when a round failed
    stop_reason: str | None  # time_limit | metric_failures | out_of_memory
    stop_log_line: str | None  # "RL stopped (metric_failures) after round N of M; best round B."
    kept_starting_adapter: str | None  # the sentence when best round is 0
    failure: str | None
    trial_report: dict[str, Any] | None
    # Merge model: {"state": merging | merged | failed, "best_round", "at", and "location", "files",
    # "size_bytes" once merged or "message" once failed}; None before one is asked for
    merge: dict[str, Any] | None
    retry_of: UUID | None
    retried_as: UUID | None
    duplicate_of: UUID | None
    duplicates: list[UUID] = field(default_factory=list)
    launched_at: str | None = None
    ended_at: str | None = None
    created_at: str = ""
    updated_at: str = ""
    # Whether anything more will happen to the run by itself: False once it has ended (Completed, Failed,
    # Cancelled, or Adapter ready after an early stop) and for a draft. The page polls exactly while live.
    live: bool = False
    start_run_name: str = ""  # the name of the run whose adapter this one continues ("" when it has none)
    # The N of "Continue from round N" (POST /api/runs/{id}/continue); None when the run has no Continue
    continues_from: int | None = None
    # the alarms standing (domain/runs/alarms.py), oldest first: kind, title, round, seen, advice, at
    alarms: list[dict[str, Any]] = field(default_factory=list)

    @cached_property
    def run_settings(self) -> RunSettings:
        """The settings, typed: what the console reads of them."""
        return RunSettings.from_saved(self.settings)

    @property
    def can_retry(self) -> bool:
        return self.state in ("failed", "cancelled") and self.retried_as is None

    @property
    def can_edit(self) -> bool:
        return self.state == "draft"

    @property
    def can_cancel(self) -> bool:
        return self.state in ("queued", "preparing", "training", "saving_adapter")


# A round's seconds, by part: what its `seconds` sums, and the columns a read of the rounds' time alone selects
ROUND_SECONDS = ("sampling_seconds", "grading_seconds", "update_seconds", "validation_seconds")


@dataclass(frozen=True)
class RoundRow:
    run_id: UUID
    round_number: int
    rounds_total: int
    reward: float | None
    signal: float | None
    cut_off: float | None
    metric_failures: int
    updated: bool
    loss: float | None
    validation_reward: float
    best_round: int
    sampling_seconds: float
    grading_seconds: float
    update_seconds: float
    validation_seconds: float
    mean_answer_tokens: float | None
    token_entropy: float | None
    peak_memory_bytes: int | None
    scored_at: str
    accuracy: float | None = None  # mean "correct" part of the round's answers, for a reward with parts
    clipped: float | None = None  # share of answer tokens the clip held back in the passes after the first
    grad_norm: float | None = None  # the update's gradient norm before clipping, mean over its passes
    passes: int | None = None  # the update's passes over the answers (Epochs); None where it did not update
    # the reward's health: the answers that failed the metric by kind (None when none did), and a custom metric's
    # sandbox batches that graded the round's answers, in all and the failed ones by the kind of their first failure
    # (None when none failed); a built-in reward runs no sandbox (sandbox_batches None)
    failures_by_kind: dict[str, int] | None = None
    sandbox_batches: int | None = None
    sandbox_failed_batches: dict[str, int] | None = None
    # grading seconds per answer over the round, median and 95th percentile (None before they were measured)
    grading_seconds_median: float | None = None
    grading_seconds_p95: float | None = None

    @property
    def seconds(self) -> float:
        """The round's seconds: sampling, grading, update and validation, summed in that order."""
        return sum(getattr(self, part) for part in ROUND_SECONDS)

    @cached_property
    def log_line(self) -> str:
        """The Training logs' line, written from the row's own columns when it is first asked for: a page shows the
        newest fifty of a run's lines, and reads all its rounds for the charts."""
        return messages.round_log_line(vars(self), self.rounds_total, self.best_round)


@dataclass(frozen=True)
class RolloutFileRow:
    run_id: UUID
    round_number: int
    path: str  # runs/<run id>/rollouts/round-001.jsonl in the organization's storage
    written_at: str


@dataclass(frozen=True)
class TimelineEntry:
    position: int
    time: str
    actor_kind: str
    actor_name: str
    event_type: str
    sentence: str


@dataclass(frozen=True)
class FeedEntry:
    position: int
    type: str
    time: str
    aggregate_id: UUID
    aggregate_version: int
    actor: dict[str, str]
    data: dict[str, Any]


@dataclass(frozen=True)
class StepRow:
    """One optimizer step of an SFT or DPO run (Run.StepLogged)."""

    run_id: UUID
    step: int
    steps: int  # of all the run will take
    epoch: float
    loss: float
    validation_loss: float | None  # on the validation examples, at the end of an epoch
    seconds: float  # since training began
    logged_at: str
