"""The installation's secret key, and what is derived from it: the session cookie key, the CSRF secret and the
key that encrypts storage credentials at rest.

The key is VERITY_SECRET_KEY when set (every web process of a production install must share it), else a random
key generated on first start in DATA_DIR/secret.key (mode 0600).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from verity.config import Settings

KEY_FILE = "secret.key"


def secret_key(settings: Settings, environ: dict[str, str] | None = None) -> bytes:
    env = os.environ if environ is None else environ
    given = env.get("VERITY_SECRET_KEY", "").strip()
    if given:
        return given.encode()
    path = Path(settings.data_dir) / KEY_FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(secrets.token_urlsafe(48))
    return path.read_text().strip().encode()


def derived(key: bytes, purpose: str) -> bytes:
    """32 bytes for one purpose, so a leak of one (a CSRF token's hash) says nothing of the others."""
    return hmac.new(key, purpose.encode(), hashlib.sha256).digest()


class SecretBox:
    """Encrypts a credential for the event store and decrypts it where it is used (the jobs, never a page)."""

    def __init__(self, key: bytes) -> None:
        self._fernet = Fernet(base64.urlsafe_b64encode(derived(key, "storage-credentials")))

    def seal(self, secret: str) -> str:
        return self._fernet.encrypt(secret.encode()).decode()

    def open(self, sealed: str) -> str:
        try:
            return self._fernet.decrypt(sealed.encode()).decode()
        except InvalidToken:
            raise ValueError("The stored credential can't be decrypted with this secret key.") from None

    def __repr__(self) -> str:
        return "SecretBox(<key hidden>)"
