"""The auth settings the app factory takes: the secret key, cookie security and the rate limits (rate_limits.py)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from verity.secrets import SecretBox, derived


@dataclass(frozen=True)
class AuthConfig:
    secret_key: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)
    secure_cookies: bool = False  # True when served over https; the embedded default serves http on 127.0.0.1
    sign_in_attempts_per_minute: int = 10  # from one address
    account_sign_in_failures: int = 10  # failed sign-ins of one account in account_sign_in_window_seconds
    account_sign_in_window_seconds: int = 900
    api_requests_per_minute: int = 600  # with one API token
    rate_limit_url: str | None = None  # redis://...: every web process counts in the same Redis
    session_days: int = 7

    @property
    def session_secret(self) -> bytes:
        return derived(self.secret_key, "session-cookie")

    @property
    def csrf_secret(self) -> str:
        return derived(self.secret_key, "csrf").hex()

    @property
    def box(self) -> SecretBox:
        return SecretBox(self.secret_key)
