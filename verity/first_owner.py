"""First start of the embedded default: the owner of the Default organization gets an account.

The email is VERITY_ADMIN_EMAIL (default owner@localhost); the password is random, printed once to the console
and written to DATA_DIR/first-owner.txt (mode 0600), so whoever started the console can sign in.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from uuid import UUID

from domain.application import Verity
from verity.config import Settings
from verity.wiring import SETUP

DEFAULT_ADMIN_EMAIL = "owner@localhost"
FIRST_OWNER_FILE = "first-owner.txt"


def admin_email(environ: dict[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    return env.get("VERITY_ADMIN_EMAIL", "").strip() or DEFAULT_ADMIN_EMAIL


def ensure_first_owner(settings: Settings, verity: Verity, org_id: UUID, email: str | None = None) -> str | None:
    """Makes `email` an owner when the organization has no member yet; returns the new password, or None when
    there was nothing to do (the owner exists, or the account already had a password)."""
    organization = verity.get_organization(org_id)
    if organization.members:
        return None
    email = email or admin_email()
    password = None
    if verity.find_account(email) is None:
        password = secrets.token_urlsafe(16)
        verity.create_account(email, password, SETUP)
    verity.add_member(org_id, email, "owner", SETUP, "owner")
    if password is not None:
        path = Path(settings.data_dir) / FIRST_OWNER_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(f"email: {email}\npassword: {password}\n")
    return password


def sign_in_words(email: str, password: str, settings: Settings, url: str) -> str:
    return (
        f"Sign in at {url}/sign-in as {email} with the password {password}\n"
        f"(shown once; also written to {Path(settings.data_dir) / FIRST_OWNER_FILE}, readable only by you)."
    )
