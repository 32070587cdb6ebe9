"""An id in a JSON body, read as the API's callers send it (a UUID string): a bad one is refused under its field."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from domain.errors import SettingsInvalid


def body_id(data: dict[str, Any], field: str, *, required: bool = False) -> UUID | None:
    """The field's UUID; None when it is absent or empty and not required."""
    value = data.get(field)
    if value in (None, "") and not required:
        return None
    try:
        return UUID(str(value))
    except ValueError:
        raise SettingsInvalid({field: f"{field} must be an ID."}) from None
