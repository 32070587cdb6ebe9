"""Sessions, CSRF, tokens, plan and role: a person signs in, works, signs out; scripts use tokens; the plan and
the role decide launches with the documents' words."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.auth.testing import TEST_PASSWORD, csrf_token_of

if TYPE_CHECKING:
    from conftest import Site

PRO_PLAN_NEEDED = "RL training is on the Pro plan. An owner can change the plan under Settings → Plan and billing."
ROLE_NEEDED = (
    "Launching a run needs the member or owner role, and you are a viewer. Ask an owner of your "
    "organization to change your role."
)
MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 64, "format_bonus": True}
BODY = {"name": "ours", "training": {"objective": "rl", "method": "lora", "gpu_count": 1, "rl": {"reward": MATH_PAIRS}}}


def test_a_session_is_a_secure_http_only_cookie_that_sign_out_ends(site: Site) -> None:
    client = site.client(None)
    from app.auth.testing import ensure_member

    ensure_member(site.verity, site.read_models, site.org_id, "member@ours.example", "member")
    token = csrf_token_of(client)
    signed_in = client.post(
        "/sign-in",
        data={"email": "member@ours.example", "password": TEST_PASSWORD, "_csrf_token": token},
        follow_redirects=False,
    )
    session = next(v for v in signed_in.headers.get_list("set-cookie") if v.startswith("session="))
    assert "HttpOnly" in session and "SameSite=lax" in session and "member@ours.example" not in session
    client.headers["x-csrftoken"] = token
    assert client.get("/runs").status_code == 200
    signed_out = client.post("/sign-out", follow_redirects=False)
    assert signed_out.status_code == 303 and signed_out.headers["location"] == "/sign-in"
    assert client.get("/runs", follow_redirects=False).status_code == 303
    assert client.get("/api/runs").status_code == 401


def test_a_wrong_password_is_refused_in_the_same_words_as_an_unknown_email(site: Site) -> None:
    site.client("member", email="ada@ours.example")
    client = site.client(None)
    token = csrf_token_of(client)
    for email, password in (("ada@ours.example", "not the password"), ("nobody@ours.example", TEST_PASSWORD)):
        answer = client.post("/sign-in", data={"email": email, "password": password, "_csrf_token": token})
        assert answer.status_code == 400 and "The email or password is not right." in answer.text
    assert client.get("/api/runs").status_code == 401


def test_sign_in_attempts_are_rate_limited(sqlite_settings) -> None:
    from litestar.testing import TestClient

    from app.auth.config import AuthConfig
    from app.factory import create_app
    from projections.store import memory_read_models
    from verity.wiring import build_application

    app = create_app(
        build_application(sqlite_settings), memory_read_models(), auth=AuthConfig(sign_in_attempts_per_minute=3)
    )
    with TestClient(app) as client:
        token = csrf_token_of(client)
        codes = [
            client.post("/sign-in", data={"email": "a@b.c", "password": "x", "_csrf_token": token}).status_code
            for _ in range(5)
        ]
    assert codes[:3] == [400, 400, 400] and codes[3:] == [429, 429]


def test_forms_and_htmx_need_the_csrf_token_and_a_bearer_token_does_not(site: Site) -> None:
    client = site.client("owner")
    header = client.headers.pop("x-csrftoken")
    assert client.post("/api/runs", json=BODY).status_code == 403  # a cookie session on /api is not exempt
    assert client.post("/settings/plan", data={"plan": "free"}).status_code == 403
    assert client.post("/settings/plan", data={"plan": "free"}, headers={"x-csrftoken": "forged"}).status_code == 403
    assert client.post("/api/runs", json=BODY, headers={"x-csrftoken": header}).status_code == 201
    assert client.post("/settings/plan", data={"plan": "pro", "_csrf_token": header}).status_code == 200
    scripted = site.token_client("member")
    assert scripted.post("/api/runs", json=BODY).status_code == 201


def test_every_answer_carries_the_security_headers(site: Site) -> None:
    client = site.client("viewer")
    for path in ("/runs", "/sign-in", "/api/runs", "/static/console.js"):
        headers = client.get(path).headers
        assert "script-src 'self'" in headers["content-security-policy"]
        assert "unsafe-inline" not in headers["content-security-policy"].split("script-src")[1].split(";")[0]
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
        assert headers["x-frame-options"] == "DENY"


def test_the_icon_answers_anyone_where_a_browser_looks_for_it_by_itself(site: Site) -> None:
    """A page that names no icon (the JSON event feed opened in a tab) has the browser ask /favicon.ico: the
    console's own icon, to a visitor signed in or not, rather than a 404 in the browser's console."""
    for client in (site.client(None), site.client("viewer")):
        icon = client.get("/favicon.ico", follow_redirects=False)
        assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
        assert icon.content == client.get("/static/favicon.svg").content and icon.content.startswith(b"<svg")


def test_a_token_acts_in_its_organization_with_its_role_until_revoked(site: Site) -> None:
    scripted = site.token_client("member")
    run_id = scripted.post("/api/runs", json=BODY).json()["run"]["id"]
    site.settle()
    timeline = scripted.get(f"/api/runs/{run_id}/events").json()
    assert timeline[0]["actor_kind"] == "token" and timeline[0]["actor_name"] == "token tests"
    feed = scripted.get("/api/events", params={"after": 0, "limit": 1000}).json()["events"]
    saved = next(e for e in feed if e["aggregate_id"] == run_id)
    assert saved["actor"]["kind"] == "token"

    theirs = site.token_client("owner", org_id=site.other_org_id)
    assert theirs.get(f"/api/runs/{run_id}").status_code == 404  # a token of another organization

    viewer = site.token_client("viewer")
    assert viewer.post("/api/runs", json=BODY).status_code == 403  # the wrong role
    refused = viewer.post(f"/api/runs/{run_id}/launch")
    assert refused.status_code == 403 and refused.json()["detail"] == ROLE_NEEDED

    owner = site.client("owner")
    token_id = scripted.headers["Authorization"].split("_")[1]
    assert (
        owner.post(
            f"/settings/tokens/{token_id[:8]}-{token_id[8:12]}-{token_id[12:16]}-{token_id[16:20]}-"
            f"{token_id[20:32]}/revoke",
            follow_redirects=False,
        ).status_code
        == 303
    )
    assert scripted.get("/api/runs").status_code == 401


def test_a_token_issued_on_the_page_is_shown_once_and_stored_hashed(site: Site) -> None:
    owner = site.client("owner")
    page = owner.post("/settings/tokens", data={"name": "nightly", "role": "viewer"})
    assert page.status_code == 201 and "shown only once" in page.text
    text = page.text.split('class="secret-once">')[1].split("<")[0]
    assert text not in owner.get("/settings/tokens").text
    assert site.verity.token_for(text).role == "viewer"
    assert text not in str(site.verity.recorder.select_notifications(1, 10_000))  # only its SHA-256 is kept


def test_drafts_save_on_any_plan_but_launching_needs_pro_and_a_member_or_owner(site: Site) -> None:
    owner = site.client("owner")
    owner.post("/settings/plan", data={"plan": "free"})
    member = site.client("member")
    saved = member.post("/api/runs", json=BODY)
    assert saved.status_code == 201  # a draft saves on any plan
    refused = member.post(f"/api/runs/{saved.json()['run']['id']}/launch")
    assert refused.status_code == 403 and refused.json()["detail"] == PRO_PLAN_NEEDED

    form = member.get("/runs/new").text
    assert "RL · reinforcement learning (GRPO) (Pro)" in form and "See plans" in form and "Upgrade" not in form
    owners_form = owner.get("/runs/new").text
    assert "(Pro)" in owners_form and "Upgrade" in owners_form and PRO_PLAN_NEEDED in owners_form

    assert member.post("/settings/plan", data={"plan": "pro"}).status_code == 403  # only owners change the plan
    owner.post("/settings/plan", data={"plan": "pro"})
    assert "(Pro)" not in member.get("/runs/new").text
    assert member.post(f"/api/runs/{saved.json()['run']['id']}/launch").status_code == 200

    viewer = site.client("viewer")
    draft = member.post("/api/runs", json=BODY).json()["run"]["id"]
    refused = viewer.post(f"/runs/{draft}/launch")
    assert refused.status_code == 403 and ROLE_NEEDED in refused.text


def test_owners_manage_members_and_the_last_owner_stays(site: Site) -> None:
    owner = site.client("owner", email="boss@ours.example")
    added = owner.post("/settings/members", data={"email": "new@ours.example", "role": "viewer"})
    assert added.status_code == 201 and "shown only" in added.text
    password = added.text.split('class="secret-once">')[1].split("<")[0]
    newcomer = site.client(None)
    token = csrf_token_of(newcomer)
    answer = newcomer.post(
        "/sign-in",
        data={"email": "new@ours.example", "password": password, "_csrf_token": token},
        follow_redirects=False,
    )
    assert answer.status_code == 303
    assert newcomer.get("/runs").status_code == 200
    boss = site.verity.find_account("boss@ours.example").id
    for other in site.read_models.members(site.org_id):
        if other.role == "owner" and other.account_id != boss:
            owner.post(f"/settings/members/{other.account_id}/role", data={"role": "member"})
    last = owner.post(f"/settings/members/{boss}/role", data={"role": "member"})
    assert last.status_code == 400 and "at least one owner" in last.text
