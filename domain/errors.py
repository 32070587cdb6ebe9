"""Domain errors: each carries the words a person reads when a command is refused."""

from __future__ import annotations


class DomainError(Exception):
    """A command was refused; `message` is what the user reads."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(DomainError):
    """The object does not exist, or belongs to another organization (which must look the same)."""


class NotAllowed(DomainError):
    """The plan or the role does not allow the command."""


class PlanNeeded(NotAllowed):
    """The organization's plan does not allow the command (RL on the Free plan); a page offers the plan with it."""


class IllegalTransition(DomainError):
    """The command does not fit the object's current state, e.g. launching a run that already ended."""


class NotReady(DomainError):
    """The run can't start where it would run, such as a worker that can't load the data it needs; nothing was
    queued, and the words say what to do."""


class ConcurrentChange(DomainError):
    """Someone else changed the same object at the same time; the slower writer loses."""


class StorageUnavailable(DomainError):
    """The storage could not take or give a file (a full disk, S3 out of reach); the command changed nothing."""


class SettingsInvalid(DomainError):
    """Settings out of bounds. `errors` maps a field name to its message ("" for form-wide)."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__(" ".join(errors.values()))
        self.errors = dict(errors)
