"""A signed-in session's identity is worked out once and kept while its account and organization are unchanged (a
request then reads two event logs for anything new rather than loading and replaying both), and a change to either
is seen by the very next request: a new role, a plan, a removal, a new password."""

from __future__ import annotations

from litestar.testing import TestClient

from app.auth.testing import TEST_PASSWORD, TESTS, sign_in_as
from app.factory import create_app
from projections.runner import ProjectionRunner
from verity.config import Settings
from verity.wiring import build_application, build_read_models, ensure_default_organization

REFUSED = "class=\"role-note\""  # a viewer's controls say why they are refused


def test_a_session_is_worked_out_again_only_once_its_account_or_organization_changed(tmp_path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    verity, read_models = build_application(settings), build_read_models(settings)
    org_id, _ = ensure_default_organization(settings, verity, read_models)
    loads: list[object] = []
    load_account = verity.get_account
    verity.get_account = lambda account_id: loads.append(account_id) or load_account(account_id)  # counts, loads
    with TestClient(create_app(verity, read_models, runner=ProjectionRunner(verity, read_models))) as client:
        sign_in_as(client, verity, read_models, org_id, email="member@acme.example", role="member")
        account = verity.find_account("member@acme.example")
        assert REFUSED not in client.get("/runs/new").text
        loaded = len(loads)
        for _ in range(3):
            assert client.get("/runs/new").status_code == 200
        assert len(loads) == loaded  # nothing changed: the identity as worked out

        verity.change_role(org_id, account.id, "viewer", TESTS, "owner")
        assert REFUSED in client.get("/runs/new").text and len(loads) == loaded + 1  # the new role, at once

        verity.change_password(account.id, TEST_PASSWORD + "!", TESTS)  # signs every session of the account out
        assert client.get("/runs/new", follow_redirects=False).status_code in (302, 303, 401)

        sign_in_as(client, verity, read_models, org_id, email="member@acme.example", role="viewer",
                   password=TEST_PASSWORD + "!")
        assert client.get("/runs/new").status_code == 200
        verity.remove_member(org_id, account.id, TESTS, "owner")
        assert client.get("/runs/new", follow_redirects=False).status_code in (302, 303, 401)


def test_a_tokens_identity_is_kept_until_it_is_revoked(tmp_path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    verity, read_models = build_application(settings), build_read_models(settings)
    org_id, _ = ensure_default_organization(settings, verity, read_models)
    issued = verity.issue_token(org_id, "script", "member", TESTS, "owner")
    headers = {"Authorization": f"Bearer {issued.text}"}
    with TestClient(create_app(verity, read_models, runner=ProjectionRunner(verity, read_models))) as client:
        assert all(client.get("/api/runs", headers=headers).status_code == 200 for _ in range(3))
        verity.revoke_token(org_id, issued.id, TESTS, "owner")
        refused = client.get("/api/runs", headers=headers)
        assert refused.status_code == 401 and "This API token is unknown or revoked." in refused.text
