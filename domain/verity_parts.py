"""What the command mixins of `domain.application.Verity` use of the application, declared once.

Verity (domain/application.py) provides them: `_save(*aggregates)` answers the log position of what it saved,
`_get(cls, aggregate_id, org_id, what)` reads an aggregate of that class and organization or raises NotFound,
`repository` is the event-sourced repository, and `get_organization` / `get_project` are the lookups every
context checks against. A mixin based on VerityParts declares only what it uses beyond these.
"""

from __future__ import annotations

from typing import Any


class VerityParts:
    _get: Any
    _save: Any
    repository: Any
    get_organization: Any
    get_project: Any
