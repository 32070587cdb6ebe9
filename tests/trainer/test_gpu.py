"""The GPU paths: vLLM colocated sampling with the adapter as a LoRA request, and 8-bit / 4-bit quantization.

Skipped where no CUDA device is present (tests/conftest.py); vllm and bitsandbytes come with the `gpu` extra.
"""

from __future__ import annotations

import pytest

from trainer.loop import run

pytestmark = [pytest.mark.gpu, pytest.mark.slow]

SMALL = {"rounds": 2, "prompts_per_round": 8, "answers_per_prompt": 8, "validation_sample_size": 8}


def test_a_run_samples_with_vllm_and_the_adapter_as_a_lora_request(run_spec, tmp_path, records):
    pytest.importorskip("vllm")
    spec = run_spec(tmp_path, generation_backend="vllm", vllm_gpu_memory=0.3, **SMALL)
    assert run(spec, emit=records), records[-1]
    rounds = records.of("round_scored")
    assert [r.round for r in rounds] == [0, 1, 2]
    assert all(r.peak_memory_bytes > 0 for r in rounds)
    assert records.types[-2:] == ["adapter_saved", "completed"]


def test_vllm_and_transformers_agree_on_the_starting_adapters_greedy_validation(run_spec, tmp_path):
    pytest.importorskip("vllm")
    scores = {}
    for backend in ("vllm", "transformers"):
        records = []
        spec = run_spec(tmp_path / backend, generation_backend=backend, vllm_gpu_memory=0.3, **SMALL)
        assert run(spec, emit=records.append)
        scores[backend] = next(r for r in records if r.type == "round_scored").validation_reward
    assert abs(scores["vllm"] - scores["transformers"]) <= 0.25  # bf16 kernels differ; greedy mostly agrees


@pytest.mark.parametrize("quantization", ["8bit", "4bit"])
def test_a_quantized_base_model_trains_its_adapter(run_spec, tmp_path, records, quantization):
    pytest.importorskip("bitsandbytes")
    spec = run_spec(tmp_path, generation_backend="transformers", quantization=quantization, **SMALL)
    assert run(spec, emit=records), records[-1]
    assert any(r.updated for r in records.of("round_scored"))
    assert records.types[-1] == "completed"

