"""Settings → Storage and Training providers, which an owner connects.

The S3 secret is encrypted before it reaches the domain and is never rendered back: the page says only whether
one is stored. Members and viewers read the providers (the run form offers them); only owners see storage.
"""

from __future__ import annotations

from typing import Annotated

from litestar import get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Redirect, Template

from app.auth.config import AuthConfig
from app.auth.settings import _page, owners_only
from app.shell.console import ConsoleController, ConsoleDep
from app.shell.identity import Identity
from domain.application import Verity
from domain.errors import SettingsInvalid

FORM = Body(media_type=RequestEncodingType.URL_ENCODED)
STORAGE_FIELDS = ("kind", "bucket", "prefix", "endpoint_url", "region", "key_id")


def _storage_context(verity: Verity, identity: Identity) -> dict:
    stored = verity.get_storage(identity.organization_id)
    settings = dict(stored.settings) if stored else {"kind": "local"}
    return {"storage": settings, "secret_stored": bool(stored and stored.secret_ciphertext)}


class ConnectionsController(ConsoleController):
    path = "/settings"
    include_in_schema = False

    @get("/storage", name="settings:storage", sync_to_thread=True)
    def storage(self, verity: Verity, identity: Identity) -> Template:
        owners_only(identity)
        return _page("storage", identity, errors={}, saved=False, **_storage_context(verity, identity))

    @post("/storage", name="settings:set-storage", sync_to_thread=True)
    def set_storage(self, data: Annotated[dict[str, str], FORM], console: ConsoleDep, auth: AuthConfig) -> Template:
        verity, identity = console.verity, console.identity
        owners_only(identity)
        secret = data.get("secret", "")
        sealed = auth.box.seal(secret) if secret else None  # an empty field keeps the stored secret
        settings = {name: data.get(name, "") for name in STORAGE_FIELDS}
        try:
            verity.set_storage(identity.organization_id, settings, sealed, identity.actor, identity.role)
        except SettingsInvalid as refused:
            context = {**_storage_context(verity, identity), "storage": settings}
            return _page("storage", identity, 422, errors=refused.errors, saved=False, **context)
        return _page("storage", identity, errors={}, saved=True, **_storage_context(verity, identity))

    @get("/providers", name="settings:providers", sync_to_thread=True)
    def providers(self, verity: Verity, identity: Identity) -> Template:
        providers = verity.providers(identity.organization_id)
        return _page("providers", identity, providers=providers, errors={}, values={})

    @post("/providers", name="settings:set-provider", sync_to_thread=True)
    def set_provider(self, data: Annotated[dict[str, str], FORM], console: ConsoleDep) -> Template | Redirect:
        verity, identity = console.verity, console.identity
        owners_only(identity)
        try:
            price = float(data.get("price_per_hour", "") or "nan")
        except ValueError:
            price = float("nan")
        try:
            if price != price:  # NaN: not a number
                raise SettingsInvalid({"price_per_hour": "The price per hour must be from 0 to 1,000 dollars."})
            written = verity.set_provider(
                identity.organization_id,
                data.get("name", ""),
                data.get("gpu", ""),
                price,
                identity.actor,
                identity.role,
            )
        except SettingsInvalid as refused:
            providers = verity.providers(identity.organization_id)
            return _page("providers", identity, 422, providers=providers, errors=refused.errors, values=data)
        return console.redirect_once_seen(written, "/settings/providers")

    @post("/providers/{provider:str}/remove", name="settings:remove-provider", sync_to_thread=True)
    def remove_provider(self, provider: str, console: ConsoleDep) -> Redirect:
        written = console.verity.remove_provider(console.organization_id, provider, console.actor, console.role)
        return console.redirect_once_seen(written, "/settings/providers")
