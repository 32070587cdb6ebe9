"""Your account: a person changes their own password (the current one first; their other sessions end, this one
goes on), signs out everywhere, and switches between the organizations they belong to; refusals say why and
change nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.auth.account import NO_ACCOUNT, NOT_A_MEMBER, PASSWORD_CHANGED
from app.auth.testing import TEST_PASSWORD, TESTS, ensure_member

if TYPE_CHECKING:
    from conftest import Site

NEW_PASSWORD = "a much longer new passphrase"


def change(client, current: str, new: str, repeat: str | None = None):
    body = {"current_password": current, "new_password": new, "repeat_password": new if repeat is None else repeat}
    return client.post("/account/password", data=body)


def test_a_viewer_changes_their_password_and_their_other_sessions_end(site: Site) -> None:
    email = "grace@ours.example"
    here, elsewhere = site.client("viewer", email=email), site.client("viewer", email=email)
    account = site.verity.find_account(email)
    version = account.version

    for current, new, repeat, field_words in (
        ("not my password", NEW_PASSWORD, None, "The current password is not right."),
        (TEST_PASSWORD, "short", None, "A password needs at least 12 characters."),
        (TEST_PASSWORD, NEW_PASSWORD, NEW_PASSWORD + "!", "The two new passwords are not the same."),
        (TEST_PASSWORD, TEST_PASSWORD, None, "The new password is the same as the current one."),
    ):
        refused = change(here, current, new, repeat)
        assert refused.status_code == 400 and field_words in refused.text, refused.text[-400:]
    assert site.verity.find_account(email).version == version  # nothing recorded
    assert elsewhere.get("/runs", follow_redirects=False).status_code == 200

    changed = change(here, TEST_PASSWORD, NEW_PASSWORD)
    assert changed.status_code == 200 and PASSWORD_CHANGED in changed.text
    assert here.get("/runs", follow_redirects=False).status_code == 200  # this session goes on
    assert here.get("/api/runs").status_code == 200
    signed_out = elsewhere.get("/runs", follow_redirects=False)
    assert signed_out.status_code == 303 and signed_out.headers["location"].startswith("/sign-in")
    assert elsewhere.get("/api/runs").status_code == 401
    assert site.verity.check_password(email, TEST_PASSWORD) is None
    assert site.verity.check_password(email, NEW_PASSWORD) is not None


def test_sign_out_everywhere_ends_every_session_of_the_account_only(site: Site) -> None:
    email = "hopper@ours.example"
    here, elsewhere = site.client("member", email=email), site.client("member", email=email)
    someone_else = site.client("member", email="lovelace@ours.example")
    answer = here.post("/account/sign-out-everywhere", follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"] == "/sign-in"
    for client in (here, elsewhere):
        assert client.get("/runs", follow_redirects=False).status_code == 303
    assert someone_else.get("/runs", follow_redirects=False).status_code == 200
    again = site.client("member", email=email)  # signing in again works as before
    assert again.get("/runs", follow_redirects=False).status_code == 200


def test_a_person_of_two_organizations_switches_between_them_and_nowhere_else(site: Site) -> None:
    email = "turing@ours.example"
    client = site.client("member", email=email)
    second = site.verity.create_organization("Second", "pro", TESTS).id
    ensure_member(site.verity, site.read_models, second, email, "viewer")
    site.settle()

    page = client.get("/account").text
    assert "Default" in page and "acting here" in page and "Switch to Second" in page
    switched = client.post("/account/organization", data={"organization": str(second)}, follow_redirects=False)
    assert switched.status_code == 303 and switched.headers["location"] == "/runs"
    runs = client.get("/runs").text
    assert "turing@ours.example · Second" in runs
    assert client.post("/datasets", data={}, follow_redirects=False).status_code == 403  # a viewer there

    for elsewhere in (str(site.other_org_id), "not-an-id"):
        refused = client.post("/account/organization", data={"organization": elsewhere}, follow_redirects=False)
        assert refused.status_code == 404 and NOT_A_MEMBER in refused.text
    assert "turing@ours.example · Second" in client.get("/runs").text  # still where it was


def test_an_api_token_has_no_account_page(site: Site) -> None:
    client = site.token_client("owner")
    answer = client.get("/account")
    assert answer.status_code == 403 and NO_ACCOUNT in answer.text


def test_whoever_runs_the_console_resets_a_forgotten_password(site: Site, sqlite_settings, monkeypatch) -> None:
    from click.testing import CliRunner

    from verity.cli import main

    email = "forgetful@ours.example"
    signed_in = site.client("member", email=email)
    monkeypatch.setenv("VERITY_DATA_DIR", str(sqlite_settings.data_dir))
    answer = CliRunner().invoke(main, ["account", "reset-password", email])
    assert answer.exit_code == 0, answer.output
    password = answer.stdout.strip()
    assert len(password) >= 16 and "shown only this once" in answer.stderr
    assert site.verity.check_password(email, password) is not None
    assert site.verity.check_password(email, TEST_PASSWORD) is None
    assert signed_in.get("/runs", follow_redirects=False).status_code == 303  # its sessions ended

    unknown = CliRunner().invoke(main, ["account", "reset-password", "nobody@ours.example"])
    assert unknown.exit_code == 1 and "There is no account with the email nobody@ours.example." in unknown.output
