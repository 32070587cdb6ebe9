"""The Jinja2 environment of every page: templates/ at the repository root, strict about undefined names."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from litestar.contrib.jinja import JinjaTemplateEngine
from litestar.template import TemplateConfig

from app.shell.fragments import KeptFragments
from domain.rewards.batch_failures import KIND_WORDS

TEMPLATES_DIR = Path(__file__).resolve().parent.parent.parent / "templates"


def format_time(value: datetime | str | None) -> str:
    """A moment as people read it in a table: 2025-06-01 14:03:22 UTC."""
    if value is None:
        return ""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.strftime("%Y-%m-%d %H:%M:%S") + (" UTC" if value.utcoffset() is not None else "")


def format_share(value: float | None, digits: int = 0) -> str:
    """A share in [0, 1] as a percentage: 0.62 → 62%."""
    return "" if value is None else f"{value * 100:.{digits}f}%"


def format_failure_kinds(kinds: dict[str, int] | None) -> str:
    """A round's metric failures by kind, in words.

    >>> format_failure_kinds({"timeout": 1, "execution": 2})
    '2 raised an error · 1 ran out of time'
    """
    return " · ".join(f"{count} {KIND_WORDS.get(kind, kind)}" for kind, count in sorted((kinds or {}).items()))


def template_config() -> TemplateConfig[JinjaTemplateEngine]:
    environment = Environment(
        loader=FileSystemLoader(TEMPLATES_DIR),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,  # a misspelt name fails the page (and its test) instead of rendering blank
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[KeptFragments],  # {% kept key %}: a piece drawn once for its key (app/shell/fragments.py)
    )
    environment.filters["time"] = format_time
    environment.filters["share"] = format_share
    environment.filters["failure_kinds"] = format_failure_kinds
    return TemplateConfig(instance=JinjaTemplateEngine.from_environment(environment))
