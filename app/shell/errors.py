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
    SettingsInvalid,
    StorageUnavailable,
)

STATUS_OF: dict[type[DomainError], int] = {
    SettingsInvalid: 422,
    NotAllowed: 403,
    NotFound: 404,
    IllegalTransition: 409,
    ConcurrentChange: 409,
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


def page_error(_: Request, error: DomainError) -> Template:
    return Template(
        template_name="shell/error.html",
        context={"message": error.message, "status": status_of(error)},
        status_code=status_of(error),
    )


API_ERROR_HANDLERS: ExceptionHandlersMap = {DomainError: api_error}
PAGE_ERROR_HANDLERS: ExceptionHandlersMap = {DomainError: page_error}
