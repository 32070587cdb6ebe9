"""schemathesis against the OpenAPI schema, with a valid owner's token: no input makes the API fail (5xx).

Each operation of the schema gets a bounded number of generated requests (derandomized, so a failure repeats).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import schemathesis
from hypothesis import HealthCheck, given, settings

from app.auth.testing import bearer_headers

if TYPE_CHECKING:
    from conftest import Site

EXAMPLES_PER_OPERATION = 25


def test_no_input_makes_the_api_fail(site: Site) -> None:
    schema = schemathesis.openapi.from_asgi("/api/schema/openapi.json", site.app)
    headers = bearer_headers(site.verity, site.org_id, "owner")
    failures: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10

    for operation in operations:
        fuzz_operation(operation, headers, failures)
    assert failures == []


def fuzz_operation(operation, headers: dict[str, str], failures: list[str]) -> None:
    label = operation.label

    @given(case=operation.as_strategy())
    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def fuzz(case) -> None:
        response = case.call(headers=headers)
        assert response.status_code != 401, f"{label}: the token was refused"
        if response.status_code >= 500:
            failures.append(f"{label} {response.status_code}: {response.text[:300]}")

    fuzz()
