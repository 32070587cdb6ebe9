"""Helpers for tests that drive the console with Litestar's TestClient (or any httpx client).

sign_in_as(client, verity, read_models, org_id, email="owner@localhost", role="owner")
    makes the account and membership when missing, signs in through /sign-in and sets the client's CSRF
    header, so the client's later requests act as that person (pages, htmx parts and /api alike);
bearer_headers(verity, org_id, role="owner") -> {"Authorization": "Bearer ..."}
    a fresh API token of that role.
"""

from __future__ import annotations

import re
from typing import Any
from uuid import UUID

from domain.actors import Actor
from domain.application import Verity

TEST_PASSWORD = "correct horse battery staple"
TESTS = Actor("system", "tests", "Tests")
CSRF_FIELD = re.compile(r'name="_csrf_token" value="([^"]+)"')


def ensure_member(verity: Verity, read_models: Any, org_id: UUID, email: str, role: str) -> None:
    if verity.find_account(email) is None:
        verity.create_account(email, TEST_PASSWORD, TESTS)
    account = verity.find_account(email)
    organization = verity.get_organization(org_id)
    current = organization.role_of(account.id)
    if current is None:
        position = verity.add_member(org_id, email, role, TESTS, "owner").position
    elif current != role:
        position = verity.change_role(org_id, account.id, role, TESTS, "owner").position
    else:
        return
    read_models.wait_for(position, timeout=10)


def csrf_token_of(client: Any) -> str:
    page = client.get("/sign-in")
    found = CSRF_FIELD.search(page.text)
    assert found, "the sign-in page carries no CSRF token"
    return found.group(1)


def sign_in_as(
    client: Any,
    verity: Verity,
    read_models: Any,
    org_id: UUID,
    *,
    email: str = "owner@localhost",
    role: str = "owner",
    password: str = TEST_PASSWORD,
) -> None:
    ensure_member(verity, read_models, org_id, email, role)
    client.headers.pop("Authorization", None)
    token = csrf_token_of(client)
    answer = client.post(
        "/sign-in",
        data={"email": email, "password": password, "next": "/runs", "_csrf_token": token},
        follow_redirects=False,
    )
    assert answer.status_code == 303, answer.text
    client.headers["x-csrftoken"] = token


def bearer_headers(verity: Verity, org_id: UUID, role: str = "owner", name: str = "tests") -> dict[str, str]:
    issued = verity.issue_token(org_id, name, role, TESTS, "owner")
    return {"Authorization": f"Bearer {issued.text}"}
