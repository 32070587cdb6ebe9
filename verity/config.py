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

    @property
    def event_store_path(self) -> Path:
        """The SQLite file of the event store on the embedded default."""
        return self.data_dir / "events.sqlite"

    @property
    def read_model_path(self) -> Path:
        """The SQLite file of the read models on the embedded default."""
        return self.data_dir / "readmodels.sqlite"

    @property
    def local_storage_dir(self) -> Path:
        return self.data_dir / "storage"

    @property
    def models_dir(self) -> Path:
        return self.data_dir / "models"

    @property
    def tiny_model_dir(self) -> Path:
        """Where the project's own tiny model is built for the Demo project."""
        return self.models_dir / "tiny-math"
