"""Builds the application and the read models from the settings: SQLite in the data folder, or PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from uuid import UUID

from domain.actors import Actor
from domain.application import Verity
from domain.organizations import Organization, Project
from migrations import MIGRATION_LOCK, apply_to
from projections.sql_tables import open_tables
from projections.store import TableReadModels
from verity.config import Settings
from verity.storage import open_storage, reference_reader

SETUP = Actor("system", "setup", "Setup")
DEFAULT_ORGANIZATION = "Default"
DEMO_PROJECT = "Demo"
# The tiny model learns Math Pairs in a few minutes on a CPU with these numbers (shared/notes/tiny-model-grpo.md);
# the product's defaults (64 prompts x 8 answers of 512 tokens at 5e-6) are meant for real models on a GPU. The
# micro batch is the largest the settings allow: the tiny model's 128 answers fit a CPU's memory twice over, and the
# loss is a weighted sum over micro batches, so it changes the update's speed and never its result.
DEMO_RUN_DEFAULTS = {
    "rl": {"rounds": 40, "prompts_per_round": 16, "answers_per_prompt": 8, "max_answer_tokens": 16},
    "advanced": {"learning_rate": 0.0005, "training_window": 256, "micro_batch_size": 64},
}


def event_store_env(settings: Settings) -> dict[str, str]:
    if settings.postgres is not None:
        pg = settings.postgres
        return {
            "PERSISTENCE_MODULE": "eventsourcing.postgres",
            "POSTGRES_DBNAME": pg.dbname,
            "POSTGRES_HOST": pg.host,
            "POSTGRES_PORT": str(pg.port),
            "POSTGRES_USER": pg.user,
            "POSTGRES_PASSWORD": pg.password,
        }
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(settings.event_store_path)}


@contextmanager
def one_process_at_a_time(settings: Settings) -> Iterator[None]:
    """On PostgreSQL, the schema's advisory lock (the read models' migrations take it too) around making the event
    store's tables: eventsourcing makes them in every process that starts, and `CREATE OR REPLACE FUNCTION` run by
    two processes at once fails in one of them with "tuple concurrently updated", even where the tables are there
    already (two workers started together)."""
    if settings.postgres is None:
        yield  # SQLite: eventsourcing's own statements are `IF NOT EXISTS` in one file lock
        return
    import psycopg

    with psycopg.connect(settings.postgres.conninfo, autocommit=True) as connection:
        connection.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
        try:
            yield
        finally:
            connection.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))


def build_application(settings: Settings) -> Verity:
    with one_process_at_a_time(settings):
        verity = Verity(env=event_store_env(settings))
    # eventsourcing falls back to an in-memory store silently; a console on it would lose everything.
    if type(verity.recorder).__module__.endswith("popo"):
        raise RuntimeError("The event store is in memory: check PERSISTENCE_MODULE in the environment.")
    verity.reference_reader = reference_reader(open_storage(settings))  # a draft's references, read from storage
    return verity


def build_read_models(settings: Settings, *, migrate: bool = True) -> TableReadModels:
    tables = open_tables(settings)
    if migrate:
        apply_to(tables)
    return TableReadModels(tables)


def ensure_default_organization(
    settings: Settings, verity: Verity, read_models: object = None
) -> tuple[UUID, UUID]:
    """Organization "Default" on plan Pro with a project "Demo" on the tiny model; idempotent."""
    org_id = Organization.create_id(DEFAULT_ORGANIZATION)
    if org_id not in verity.repository:
        verity.create_organization(DEFAULT_ORGANIZATION, "pro", SETUP)
    return org_id, ensure_demo_project(settings, verity, org_id)


def ensure_demo_project(settings: Settings, verity: Verity, org_id: UUID, model: str | None = None) -> UUID:
    """A project "Demo" on `model` (default: the tiny model) with the numbers the tiny model learns with; idempotent."""
    project_id = Project.create_id(org_id, DEMO_PROJECT)
    if project_id not in verity.repository:
        verity.create_project(org_id, DEMO_PROJECT, model or str(settings.tiny_model_dir), None, False, SETUP)
    if model is None:
        verity.set_project_run_defaults(org_id, project_id, DEMO_RUN_DEFAULTS, SETUP)  # records only a change
    return project_id
