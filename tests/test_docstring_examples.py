"""The `>>>` examples in the code's docstrings run: each module of the code's folders whose source holds one has
its docstrings' examples executed here, so a wrong example fails the suite with the example's own output.

An example that needs more than the module itself (a model, a database) is marked `# doctest: +SKIP`, with the
reason beside it.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("app", "domain", "jobs", "projections", "trainer", "verity")


def modules_with_examples() -> list[str]:
    found = []
    for folder in FOLDERS:
        for source in sorted((ROOT / folder).rglob("*.py")):
            if ">>>" in source.read_text(encoding="utf-8"):
                parts = source.relative_to(ROOT).with_suffix("").parts
                found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def run_examples(name: str) -> tuple[doctest.TestResults, str]:
    """The module's examples, run as `python -m doctest` would: how many failed of how many, and the report."""
    module = importlib.import_module(name)
    report: list[str] = []
    runner = doctest.DocTestRunner(verbose=False)
    for test in doctest.DocTestFinder(exclude_empty=True).find(module, name):
        runner.run(test, out=report.append)
    return doctest.TestResults(runner.failures, runner.tries), "".join(report)


@pytest.mark.parametrize("name", modules_with_examples())
def test_the_module_s_examples_hold(name: str) -> None:
    results, report = run_examples(name)
    assert results.attempted > 0, f"{name} holds `>>>` but no docstring example was found to run"
    assert results.failed == 0, f"{results.failed} of {results.attempted} examples of {name} failed:\n{report}"


def test_a_wrong_example_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "wrongly_shown.py").write_text('def double(x):\n    """\n    >>> double(2)\n    5\n    """\n'
                                               "    return 2 * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    results, report = run_examples("wrongly_shown")
    assert (results.failed, results.attempted) == (1, 1)
    assert "Expected:\n    5\nGot:\n    4" in report
