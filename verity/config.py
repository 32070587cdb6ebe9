"""Configuration of every Verity process, read once from the environment.

Everything that differs between the embedded default and production is chosen here by environment
variables; the code paths after this point are the same.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse


class ConfigurationError(ValueError):
    """A setting in the environment is missing or malformed."""


@dataclass(frozen=True)
class PostgresSettings:
    host: str
    port: int
    dbname: str
    user: str
    password: str

    @classmethod
    def from_url(cls, url: str) -> PostgresSettings:
        parsed = urlparse(url)
        if parsed.scheme not in ("postgres", "postgresql"):
            raise ConfigurationError(f"VERITY_DATABASE_URL must start with postgresql://, not {parsed.scheme}://")
        dbname = parsed.path.lstrip("/")
        if not dbname:
            raise ConfigurationError("VERITY_DATABASE_URL names no database, e.g. postgresql://user@host/verity")
        return cls(
            host=parsed.hostname or "127.0.0.1",
            port=parsed.port or 5432,
            dbname=dbname,
            user=unquote(parsed.username or "postgres"),
            password=unquote(parsed.password or ""),
        )

    @property
    def conninfo(self) -> str:
        """A psycopg connection string."""
        return (
            f"host={self.host} port={self.port} dbname={self.dbname} user={self.user} password={self.password}"
        )


class _InDataDir:
    """A path in the data folder, read as an attribute of the settings: `settings.models_dir` is
    `settings.data_dir / "models"`."""

    def __init__(self, *parts: str) -> None:
        self.parts = parts

    def __get__(self, settings: Settings | None, owner: type | None = None) -> Path:
        if settings is None:
            raise AttributeError("a path in the data folder is an instance's")
        return settings.data_dir.joinpath(*self.parts)


@dataclass(frozen=True)
class Settings:
    """Where the data lives, which broker carries jobs, and where files are stored."""

    data_dir: Path
    postgres: PostgresSettings | None = None
    broker_url: str | None = None
    storage_url: str | None = None
    s3_endpoint_url: str | None = None
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        env = dict(os.environ if environ is None else environ)
        database_url = env.get("VERITY_DATABASE_URL", "").strip()
        return cls(
            data_dir=Path(env.get("VERITY_DATA_DIR", "./data")).resolve(),
            postgres=PostgresSettings.from_url(database_url) if database_url else None,
            broker_url=env.get("VERITY_BROKER_URL", "").strip() or None,
            storage_url=env.get("VERITY_STORAGE_URL", "").strip() or None,
            s3_endpoint_url=env.get("VERITY_S3_ENDPOINT_URL", "").strip() or None,
        )

    @property
    def uses_postgres(self) -> bool:
        return self.postgres is not None

    # the SQLite files of the event store and of the read models on the embedded default
    event_store_path = _InDataDir("events.sqlite")
    read_model_path = _InDataDir("readmodels.sqlite")
    local_storage_dir = _InDataDir("storage")
    models_dir = _InDataDir("models")
    tiny_model_dir = _InDataDir("models", "tiny-math")  # where the project's own tiny model is built for the Demo
