"""A trainer started by hand (not by a worker, whose umask it would inherit) still writes its rollouts and adapter
readable by its owner alone, like everything else in the data folder."""

from __future__ import annotations

import json
import stat
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def test_a_runs_rollouts_and_adapter_are_its_owners_alone(run_spec, tmp_path):
    storage = tmp_path / "data" / "storage"
    spec = run_spec(storage, rounds=1, prompts_per_round=4, answers_per_prompt=2, validation_sample_size=8)
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(spec.to_dict()))

    done = subprocess.run(
        [sys.executable, "-m", "trainer", "run", str(spec_path)],
        capture_output=True, text=True, timeout=300, umask=0o022,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr[-2000:]
    written = list(storage.rglob("*"))
    assert any(path.name.startswith("round-") for path in written) and any("adapter" in path.parts for path in written)
    modes = {oct(stat.S_IMODE(path.stat().st_mode)) for path in written if path.is_file()}
    folders = {oct(stat.S_IMODE(path.stat().st_mode)) for path in [storage, *written] if path.is_dir()}
    assert (modes, folders) == ({"0o600"}, {"0o700"})
