"""Domain errors, answered in the user's words: JSON under /api/, a page everywhere else.

Each kind of refusal has its own status; nothing here turns an error into a 200.
"""

from __future__ import annotations

from litestar import Request, Response
from litestar.response import Template
from litestar.types import ExceptionHandlersMap

from domain.errors import (
    ConcurrentChange,
    DomainError,
    IllegalTransition,
    NotAllowed,
    NotFound,
    NotReady,
    PlanNeeded,
    SettingsInvalid,
    StorageUnavailable,
)

STATUS_OF: dict[type[DomainError], int] = {
    SettingsInvalid: 422,
    NotAllowed: 403,
    NotFound: 404,
    IllegalTransition: 409,
    ConcurrentChange: 409,
    NotReady: 409,
    StorageUnavailable: 503,
}


def status_of(error: DomainError) -> int:
    for kind in type(error).__mro__:
        if kind in STATUS_OF:
            return STATUS_OF[kind]
    return 400


def api_error(_: Request, error: DomainError) -> Response[dict]:
    status = status_of(error)
    if isinstance(error, SettingsInvalid):
        return Response({"errors": error.errors}, status_code=status)
    return Response({"status_code": status, "detail": error.message}, status_code=status)


def page_error(request: Request, error: DomainError) -> Template:
    """The refusal in words; the plan's offers the plan page (Upgrade for an owner, See plans for the others)."""
    context = {"message": error.message, "status": status_of(error), "plan_refused": isinstance(error, PlanNeeded)}
    identity = request.scope.get("state", {}).get("identity")
    if identity is not None:  # the top bar, and the plan notice's Upgrade or See plans
        context["identity"] = identity
    return Template(template_name="shell/error.html", context=context, status_code=status_of(error))


API_ERROR_HANDLERS: ExceptionHandlersMap = {DomainError: api_error}
PAGE_ERROR_HANDLERS: ExceptionHandlersMap = {DomainError: page_error}
