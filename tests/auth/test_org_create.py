"""Whoever runs the console creates an organization from the command line, with its first owner: a new account's
password is printed once, an existing account keeps its own; the owner signs in to the console and sees their
organization and nothing of the others. A refusal says why, exits non-zero and records nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner
from litestar.testing import TestClient

from app.auth.testing import TEST_PASSWORD, csrf_token_of
from domain.organizations import Organization, Project
from verity.cli import main

if TYPE_CHECKING:
    from conftest import Site

STRANGER_RUN = "the stranger's secret run"  # as tests/auth/conftest.py names Other's objects
STRANGER_EMAIL = "stranger@other.example"


@pytest.fixture
def verity_command(site: Site, sqlite_settings, monkeypatch):
    """`verity ...` on the site's data folder, as whoever runs the console types it."""
    monkeypatch.setenv("VERITY_DATA_DIR", str(sqlite_settings.data_dir))
    monkeypatch.delenv("VERITY_DATABASE_URL", raising=False)

    def run(*arguments: str):
        return CliRunner().invoke(main, list(arguments))

    return run


def signed_in(site: Site, email: str, password: str) -> TestClient:
    site.settle()
    client = site.clients_open.enter_context(TestClient(site.app))
    token = csrf_token_of(client)
    answer = client.post(
        "/sign-in", data={"email": email, "password": password, "next": "/runs", "_csrf_token": token},
        follow_redirects=False,
    )  # fmt: skip
    assert answer.status_code == 303, answer.text
    client.headers["x-csrftoken"] = token
    return client


def test_a_new_organization_and_its_new_owner_who_signs_in_and_sees_only_it(site: Site, verity_command) -> None:
    created = verity_command("org", "create", "Acme Labs", "--owner", "Ada@Acme.example")

    assert created.exit_code == 0, created.output
    password = created.stdout.strip()
    assert len(password) >= 16 and "\n" not in password
    assert "Acme Labs" in created.stderr and "ada@acme.example" in created.stderr
    assert "shown only this once" in created.stderr
    organization = site.verity.get_organization(Organization.create_id("Acme Labs"))
    assert organization.plan == "free"
    assert [member["email"] for member in organization.members.values()] == ["ada@acme.example"]
    assert organization.owners() == [str(site.verity.find_account("ada@acme.example").id)]

    ada = signed_in(site, "ada@acme.example", password)
    account = ada.get("/account")
    assert account.status_code == 200
    assert "acting in Acme Labs as owner" in account.text
    for elsewhere in ("Default", "Other"):
        assert elsewhere not in account.text
    runs, feed = ada.get("/runs"), ada.get("/api/events", params={"after": 0, "limit": 1000})
    assert runs.status_code == 200 and feed.status_code == 200
    for theirs in (STRANGER_RUN, "Theirs"):  # Other's run and project
        assert theirs not in runs.text and theirs not in feed.text
    assert ada.get("/settings").text.count("Acme Labs") >= 1
    # Their own first project, Demo on the tiny model, is there to configure a run in; Default's is not theirs.
    own_demo = Project.create_id(Organization.create_id("Acme Labs"), "Demo")
    assert [project.id for project in site.read_models.projects(Organization.create_id("Acme Labs"))] == [own_demo]
    assert str(Project.create_id(Organization.create_id("Default"), "Demo")) not in feed.text
    configure = ada.get("/runs/new")
    assert configure.status_code == 200 and str(own_demo) in configure.text


def test_an_existing_account_becomes_the_owner_with_its_own_password(site: Site, verity_command) -> None:
    created = verity_command("org", "create", "Beta", "--owner", STRANGER_EMAIL, "--plan", "pro")

    assert created.exit_code == 0, created.output
    assert created.stdout == ""  # no password: the account has one
    assert "already had an account" in created.stderr and "none is printed" in created.stderr
    assert site.verity.get_organization(Organization.create_id("Beta")).plan == "pro"
    stranger = signed_in(site, STRANGER_EMAIL, TEST_PASSWORD)
    account = stranger.get("/account").text
    assert "Switch to Beta" in account or "acting in Beta" in account
    assert "Other" in account and "Default" not in account


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        (["Default", "--owner", "ada@acme.example"], "An organization named Default already exists."),
        (["  other ", "--owner", "ada@acme.example"], "An organization named other already exists."),
        (["Acme", "--owner", "ada at acme"], "Enter an email address, such as ada@example.com."),
        (["Acme", "--owner", "ada@acme.example", "--plan", "enterprise"], "The plan must be free or pro."),
        (["  ", "--owner", "ada@acme.example"], "Name the organization."),
    ],
)
def test_a_refusal_says_why_and_records_nothing(site: Site, verity_command, arguments, words) -> None:
    before = site.verity.recorder.max_notification_id()

    refused = verity_command("org", "create", *arguments)

    assert refused.exit_code != 0 and words in refused.output
    assert refused.stdout == ""
    assert site.verity.recorder.max_notification_id() == before
    assert site.verity.find_account("ada@acme.example") is None
