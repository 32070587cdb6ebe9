"""The rate limits, each refused in words: failed sign-ins per account (whatever address they come from; a success
starts over), API requests per token (another token, and a person's session, go on), and both counted in Redis
across two web processes when VERITY_RATE_LIMIT_URL names one. The per-address sign-in limit has its own test in
test_sign_in_and_tokens.py."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack

import pytest
from litestar.testing import TestClient

from app.auth.config import AuthConfig
from app.auth.testing import TEST_PASSWORD, bearer_headers, csrf_token_of, ensure_member, sign_in_as
from app.factory import create_app
from projections.runner import ProjectionRunner
from verity.config import Settings
from verity.wiring import build_application, build_read_models, ensure_default_organization

REDIS = "redis://127.0.0.1:6379/14"
TOO_MANY_FOR_ACCOUNT = "Too many failed sign-ins to this account: at most 2 in 15 minutes."


class Console:
    def __init__(self, settings: Settings, clients_open: ExitStack, **limits: object) -> None:
        self.clients_open = clients_open  # shut at the test's end, with the projection runner each client started
        self.verity = build_application(settings)
        self.read_models = build_read_models(settings)
        self.org_id, _ = ensure_default_organization(settings, self.verity, self.read_models)
        runner = ProjectionRunner(self.verity, self.read_models)
        runner.run_once()
        auth = AuthConfig(secret_key=b"k" * 32, sign_in_attempts_per_minute=1000, **limits)
        self.app = create_app(self.verity, self.read_models, runner=runner, auth=auth)

    def client(self) -> TestClient:
        return self.clients_open.enter_context(TestClient(self.app))


@pytest.fixture
def consoles() -> Iterator[Callable[..., Console]]:
    """consoles(settings, **limits): a console whose clients are shut when the test ends."""
    with ExitStack() as clients_open:
        yield lambda settings, **limits: Console(settings, clients_open, **limits)


@pytest.fixture
def console(sqlite_settings: Settings, consoles) -> Console:
    return consoles(sqlite_settings, account_sign_in_failures=2)  # each failure costs a password hash: few of them


def _sign_in(client: TestClient, email: str, password: str, address: str = "10.0.0.1"):
    token = csrf_token_of(client)
    return client.post("/sign-in", data={"email": email, "password": password, "_csrf_token": token},
                       headers={"X-Forwarded-For": address}, follow_redirects=False)


def test_failed_sign_ins_to_one_account_are_limited_whatever_the_address(console: Console) -> None:
    email = "member@ours.example"
    client = console.client()  # its app's runner follows the log, so the membership is read at once
    ensure_member(console.verity, console.read_models, console.org_id, email, "member")
    codes = [_sign_in(client, email, "wrong", f"10.0.0.{n}").status_code for n in range(2)]
    assert codes == [400, 400]

    refused = _sign_in(client, email, TEST_PASSWORD)  # even the right password waits now
    assert refused.status_code == 429 and TOO_MANY_FOR_ACCOUNT in refused.text
    assert _sign_in(client, "someone.else@ours.example", "wrong").status_code == 400  # another account's count


def test_a_sign_in_that_succeeds_starts_the_count_over(console: Console) -> None:
    email = "owner@ours.example"
    client = console.client()
    ensure_member(console.verity, console.read_models, console.org_id, email, "owner")
    assert _sign_in(client, email, "wrong").status_code == 400
    assert _sign_in(client, email, TEST_PASSWORD).status_code == 303
    assert [_sign_in(client, email, "wrong").status_code for _ in range(2)] == [400, 400]
    assert _sign_in(client, email, TEST_PASSWORD).status_code == 429


def test_api_requests_are_limited_per_token_in_words(sqlite_settings: Settings, consoles) -> None:
    console = consoles(sqlite_settings, api_requests_per_minute=3)
    client = console.client()
    first = bearer_headers(console.verity, console.org_id, name="script one")
    second = bearer_headers(console.verity, console.org_id, name="script two")

    codes = [client.get("/api/runs", headers=first).status_code for _ in range(4)]

    assert codes == [200, 200, 200, 429]
    refused = client.get("/api/runs", headers=first)
    assert refused.json()["detail"] == ("Too many requests with this API token: at most 3 a minute. Wait a minute, "
                                        "then try again.")
    assert client.get("/api/runs", headers=second).status_code == 200  # each token has its own count
    person = console.client()
    sign_in_as(person, console.verity, console.read_models, console.org_id)
    assert [person.get("/api/runs").status_code for _ in range(5)] == [200] * 5  # a session is not a token


def test_two_web_processes_count_in_the_same_redis(tmp_path, consoles) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    limits = {"account_sign_in_failures": 2, "api_requests_per_minute": 3, "rate_limit_url": REDIS}
    one, two = consoles(settings, **limits), consoles(settings, **limits)
    email = f"shared-{uuid.uuid4().hex[:8]}@ours.example"
    first, second = one.client(), two.client()
    ensure_member(one.verity, one.read_models, one.org_id, email, "member")

    codes = [_sign_in(client, email, "wrong").status_code for client in (first, second)]
    assert codes == [400, 400]
    assert _sign_in(second, email, TEST_PASSWORD).status_code == 429

    token = bearer_headers(one.verity, one.org_id, name=f"shared {email}")
    calls = [client.get("/api/runs", headers=token).status_code for client in (first, second, first, second)]
    assert calls == [200, 200, 200, 429]
