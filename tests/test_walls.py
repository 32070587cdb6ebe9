"""The walls of ../shared/ARCHITECTURE.md, read from every import statement of each room (functions' own imports
and TYPE_CHECKING blocks included): a room that reaches past its wall fails here, naming the file and the import."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODEL_LIBRARIES = ("torch", "transformers", "peft", "vllm", "trl", "bitsandbytes", "accelerate", "datasets")
# Of domain/, the trainer may import the reward code and the run's pure rules (plain Python, no eventsourcing).
TRAINER_MAY_IMPORT_OF_DOMAIN = ("domain.rewards", "domain.runs.time_limit", "domain.runs.messages")
WALLS: dict[str, tuple[str, ...]] = {
    "domain": ("app", "projections", "jobs", "trainer", "litestar", "psycopg", "sqlite3", "dramatiq", "boto3",
               "jinja2", *MODEL_LIBRARIES),
    "app": ("trainer", *MODEL_LIBRARIES),
    "trainer": ("app", "projections", "jobs", "litestar", "eventsourcing", "dramatiq", "jinja2"),
    "projections": ("app", "jobs", "trainer", "litestar", "dramatiq", *MODEL_LIBRARIES),
    "jobs": ("app", "litestar", "jinja2"),
}


def imported_modules(source: Path) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source.read_text(), str(source))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # `from domain.runs import messages` imports domain.runs.messages: the name may be a module
            found.extend((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)
    return found


def reaches(module: str, forbidden: str) -> bool:
    return module == forbidden or module.startswith(forbidden + ".")


def trainer_may_import(module: str) -> bool:
    return any(reaches(module, allowed) for allowed in TRAINER_MAY_IMPORT_OF_DOMAIN)


def crossings(room: str) -> list[str]:
    crossed = []
    for source in sorted((ROOT / room).rglob("*.py")):
        for line, module in imported_modules(source):
            if any(reaches(module, wall) for wall in WALLS[room]) or (
                room == "trainer" and reaches(module, "domain") and not trainer_may_import(module)
            ):
                crossed.append(f"{source.relative_to(ROOT)}:{line} imports {module}")
    return crossed


@pytest.mark.parametrize("room", sorted(WALLS))
def test_the_room_keeps_to_its_wall(room: str) -> None:
    assert crossings(room) == []


def test_the_wall_check_sees_a_crossing(tmp_path: Path) -> None:
    source = tmp_path / "leaky.py"
    source.write_text("def f():\n    from jobs.worker import main\n    import torch.nn\n")
    assert imported_modules(source) == [(2, "jobs.worker.main"), (3, "torch.nn")]
    assert reaches("torch.nn", "torch") and not reaches("torchvision", "torch")
