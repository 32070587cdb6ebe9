"""What a round's checkpoint costs (trainer/checkpoint.py): on the tiny model, its share of a round; for the adapter
of a 0.5B-parameter model (Qwen2.5-0.5B's shapes, LoRA rank 16 on every linear layer), its size and writing time.

Run: .venv/bin/python bench/checkpoint.py  (about a minute on 2 cores; prints one line per figure)
"""

from __future__ import annotations

import hashlib
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from tests.trainer.conftest import make_spec  # noqa: E402  (the tests' spec of a tiny-model run)
from trainer.loop import run  # noqa: E402
from trainer.storage import LocalStorage  # noqa: E402

# Qwen2.5-0.5B: 24 layers, hidden 896, MLP 4864, key/value heads of 2 x 64
LAYERS, HIDDEN, MLP, KEY_VALUE, RANK = 24, 896, 4864, 128, 16
LINEAR_SHAPES = {"q": (HIDDEN, HIDDEN), "k": (HIDDEN, KEY_VALUE), "v": (HIDDEN, KEY_VALUE), "o": (HIDDEN, HIDDEN),
                 "gate": (HIDDEN, MLP), "up": (HIDDEN, MLP), "down": (MLP, HIDDEN)}


def tiny_model_rounds() -> None:
    model = REPO / ".tiny-model" / "v1-seed0"
    if not (model / "tiny_model.json").exists():
        print("tiny model: not built (run the tests once, or python -m trainer tiny-model)")
        return
    with tempfile.TemporaryDirectory() as storage:
        records: list = []
        run(make_spec(model, Path(storage), rounds=4, prompts_per_round=16), emit=records.append)
    rounds = [r for r in records if r.type == "round_scored" and r.round > 0]
    share = statistics.mean(r.checkpoint_seconds / r.seconds.total for r in rounds)
    print(f"tiny model: checkpoint {statistics.mean(r.checkpoint_seconds for r in rounds) * 1000:.0f} ms of a "
          f"{statistics.mean(r.seconds.total for r in rounds):.2f} s round ({share:.1%})")


def half_billion_adapter() -> None:
    adapter = torch.nn.ParameterList(
        torch.nn.Parameter(torch.randn(shape) * 0.01)
        for _ in range(LAYERS) for rows, cols in LINEAR_SHAPES.values() for shape in ((RANK, rows), (cols, RANK))
    )
    optimizer = torch.optim.AdamW(adapter.parameters(), lr=1e-5)
    sum(p.square().sum() for p in adapter).backward()
    optimizer.step()  # fills Adam's two moments
    weights = {str(i): p.detach().clone() for i, p in enumerate(adapter)}
    payload = {"adapter": weights, "optimizer": optimizer.state_dict(), "random": torch.get_rng_state(),
               "run_state": {"best_adapter": {k: v.clone() for k, v in weights.items()}}}
    timings = []
    with tempfile.TemporaryDirectory() as root:
        storage = LocalStorage(root)
        for _ in range(3):
            started = time.perf_counter()
            buffer = io.BytesIO()
            torch.save(payload, buffer)  # as write_checkpoint does
            data = buffer.getvalue()
            hashlib.sha256(data).hexdigest()
            storage.put_bytes("runs/r/checkpoints/round-001.pt", data)
            timings.append(time.perf_counter() - started)
    parameters = sum(p.numel() for p in adapter)
    print(f"0.5B model's adapter ({parameters / 1e6:.1f}M parameters): checkpoint {len(data) / 1e6:.0f} MB, "
          f"written in {statistics.median(timings) * 1000:.0f} ms (local disk)")


if __name__ == "__main__":
    tiny_model_rounds()
    half_billion_adapter()
