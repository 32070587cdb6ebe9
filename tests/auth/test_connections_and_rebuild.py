"""An owner connects storage and providers; the secret is encrypted at rest, never shown, never in the feed; and
the members and tokens read models rebuild from the log into the same rows as live."""

from __future__ import annotations

from typing import TYPE_CHECKING

from projections.rebuild import rebuild_all
from projections.sql_tables import open_tables
from projections.store import TableReadModels

if TYPE_CHECKING:
    from conftest import Site

SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def test_the_storage_secret_is_encrypted_never_shown_and_never_in_the_feed(site: Site) -> None:
    owner = site.client("owner")
    form = {"kind": "s3", "bucket": "runs", "endpoint_url": "http://s3.local", "key_id": "AKIA1", "secret": SECRET}
    saved = owner.post("/settings/storage", data=form)
    assert saved.status_code == 200 and "Storage saved." in saved.text and SECRET not in saved.text
    page = owner.get("/settings/storage").text
    assert SECRET not in page and "A secret is stored" in page
    owner.post("/settings/storage", data={**form, "secret": ""})  # an empty field keeps the stored secret

    stored = site.verity.get_storage(site.org_id)
    assert stored.secret_ciphertext and SECRET not in stored.secret_ciphertext
    box = site.app.dependencies["auth"].dependency().box  # type: ignore[attr-defined]
    assert box.open(stored.secret_ciphertext) == SECRET
    everything = str(site.verity.recorder.select_notifications(1, 100_000))
    assert SECRET not in everything
    site.settle()
    feed = owner.get("/api/events", params={"after": 0, "limit": 1000}).text
    assert stored.secret_ciphertext not in feed and "password_hash" not in feed and "token_sha256" not in feed

    assert site.client("member").get("/settings/storage").status_code == 403


def test_owners_edit_the_training_providers_and_local_always_exists(site: Site) -> None:
    owner = site.client("owner")
    assert (
        owner.post(
            "/settings/providers",
            data={"name": "runpod-h100", "gpu": "H100 80GB", "price_per_hour": "2.5"},
            follow_redirects=False,
        ).status_code
        == 303
    )
    refused = owner.post("/settings/providers", data={"name": "local", "gpu": "x", "price_per_hour": "1"})
    assert refused.status_code == 422 and "always exists" in refused.text
    assert [p.name for p in site.verity.providers(site.org_id)] == ["local", "runpod-h100"]
    member = site.client("member")
    assert "runpod-h100" in member.get("/settings/providers").text
    assert (
        member.post("/settings/providers", data={"name": "mine", "gpu": "x", "price_per_hour": "1"}).status_code == 403
    )


def test_members_and_tokens_rebuild_into_the_rows_live_projection_made(site: Site, sqlite_settings) -> None:
    owner = site.client("owner")
    owner.post("/settings/members", data={"email": "someone@ours.example", "role": "viewer"})
    owner.post("/settings/tokens", data={"name": "ci", "role": "member"})
    site.settle()
    live = {table: site.read_models.dump()[table] for table in ("memberships", "api_tokens")}  # type: ignore[attr-defined]
    assert live["memberships"] and live["api_tokens"]
    rebuild_all(sqlite_settings)
    rebuilt = TableReadModels(open_tables(sqlite_settings)).dump()
    assert {table: rebuilt[table] for table in live} == live
