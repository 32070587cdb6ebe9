"""Answer tokens per second of the Transformers sampling backend against HF `generate()` and, where vLLM imports,
vLLM's offline `generate`, all with the same LoRA adapter, on a model of a given shape built here (random weights,
nothing downloaded).

    .venv/bin/python bench/gpu_sampling.py [--shape tiny|0.5b] [--prompts 16] [--answers 8] [--tokens 256]
                                           [--bandwidth-tbs 3.35] [--dtype auto|float32|bfloat16] [--repeats 2]

The model: a Qwen2 shape with random weights (0.5b: Qwen2.5-0.5B's, 494M parameters; tiny: the tiny model's 1.8M,
as a Qwen2), a new LoRA adapter (rank 16, alpha 32, every linear layer) whose B is made nonzero so that it changes
the answers. Prompts: synthetic token ids, a 14-token beginning they share (a chat template's) and 16 of their own.
The end token is id 3: random weights rarely draw it, so answers mostly run to --tokens, as the GPU note measured.
Temperature 1, every token; each figure is the best of --repeats timed calls after one untimed warm-up call (for the
graphs path the warm-up is when torch.compile compiles and captures: its seconds are printed apart).

Printed: answer tokens/s of each, their ratios to the backend's dynamic loop, and the bandwidth bound: a decode
step must read every weight once, so at best it takes parameter bytes / memory bandwidth, and the batch makes one
token per row per step. The bandwidth is assumed (H100 SXM: 3.35 TB/s; H200: 4.8), not measured: pass yours.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

END_ID, PAD_ID = 3, 0
SHARED_PROMPT_TOKENS, OWN_PROMPT_TOKENS = 14, 16
SHAPES = {
    "0.5b": {"vocab_size": 151_936, "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
             "num_attention_heads": 14, "num_key_value_heads": 2},
    "tiny": {"vocab_size": 100, "hidden_size": 192, "intermediate_size": 512, "num_hidden_layers": 4,
             "num_attention_heads": 4, "num_key_value_heads": 4},
}


def build_model(shape: str, dtype: torch.dtype, device: torch.device):
    """A Qwen2 model of the shape, random weights, with a LoRA adapter whose B is nonzero."""
    from peft import LoraConfig, get_peft_model
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(**SHAPES[shape], max_position_embeddings=4096, tie_word_embeddings=True,
                         eos_token_id=END_ID, pad_token_id=PAD_ID, bos_token_id=None)
    torch.manual_seed(0)
    with torch.device(device):
        base = Qwen2ForCausalLM(config).to(dtype)
    model = get_peft_model(base, LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0, target_modules="all-linear",
                                            task_type="CAUSAL_LM"))
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(std=0.01)
    return model.eval()


def synthetic_prompts(count: int, vocab: int) -> list[list[int]]:
    generator = torch.Generator().manual_seed(1)
    shared = torch.randint(10, vocab, (SHARED_PROMPT_TOKENS,), generator=generator).tolist()
    return [shared + torch.randint(10, vocab, (OWN_PROMPT_TOKENS,), generator=generator).tolist()
            for _ in range(count)]


def timed(run: Callable[[], int], device: torch.device, repeats: int) -> tuple[float, float, int]:
    """→ (warm-up seconds, best seconds, answer tokens of the best call)."""
    def once() -> tuple[float, int]:
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        tokens = run()
        if device.type == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - start, tokens

    warm_up, _ = once()
    best = min(once() for _ in range(repeats))
    return warm_up, best[0], best[1]


def transformers_backend(model, prompts, answers: int, tokens: int, device: torch.device, decode: str):
    from trainer.sampling import TransformersBackend

    backend = TransformersBackend(model, PAD_ID, {END_ID}, device, seed=0, decode=decode)  # type: ignore[arg-type]

    def run() -> int:
        groups = backend.sample(prompts, answers, tokens, False, lambda: False)
        return sum(len(answer.token_ids) for group in groups for answer in group)

    return run


def hf_generate(model, prompts, answers: int, tokens: int, device: torch.device):
    from trainer.prompt_cache import left_padded

    ids, mask = left_padded([p for p in prompts for _ in range(answers)], PAD_ID)
    ids, mask = ids.to(device), mask.to(device)

    def run() -> int:
        with torch.inference_mode():
            output = model.generate(input_ids=ids, attention_mask=mask, do_sample=True, temperature=1.0, top_k=0,
                                    top_p=1.0, max_new_tokens=tokens, eos_token_id=END_ID, pad_token_id=PAD_ID)
        generated = output[:, ids.shape[1]:]  # [rows, new tokens]: padding after an answer's end token
        ended = (generated == END_ID).int().cumsum(dim=1)  # [rows, new tokens]: >0 from the end token on
        return int(((ended == 0) | ((ended == 1) & (generated == END_ID))).sum())

    return run


def vllm_generate(model, prompts, answers: int, tokens: int, folder: Path):
    """vLLM offline, the base saved to a folder and the same adapter as a LoRA request (as trainer/vllm_backend.py
    gives it). → (run, close)."""
    from vllm import LLM, SamplingParams
    from vllm.lora.request import LoRARequest

    base_dir, adapter_dir = folder / "base", folder / "adapter"
    model.save_pretrained(adapter_dir)
    model.get_base_model().save_pretrained(base_dir)
    engine = LLM(model=str(base_dir), skip_tokenizer_init=True, enable_lora=True, max_lora_rank=16, max_loras=1,
                 dtype="bfloat16", gpu_memory_utilization=0.5, seed=0, enable_prefix_caching=True,
                 max_model_len=SHARED_PROMPT_TOKENS + OWN_PROMPT_TOKENS + tokens + 8)
    params = SamplingParams(n=answers, temperature=1.0, max_tokens=tokens, stop_token_ids=[END_ID], detokenize=False)
    request = LoRARequest("bench", 1, str(adapter_dir))
    inputs = [{"prompt_token_ids": p} for p in prompts]

    def run() -> int:
        outputs = engine.generate(inputs, params, lora_request=request, use_tqdm=False)  # type: ignore[arg-type]
        return sum(len(completion.token_ids) for output in outputs for completion in output.outputs)

    return run, engine


def merge_drift(model, prompts, device: torch.device) -> float:
    """The largest difference of next-token logits between the adapter merged (trainer/merged_adapter.py) and
    unmerged, in the model's dtype: what merging for sampling changes in the policy."""
    from trainer.merged_adapter import adapter_merged
    from trainer.prompt_cache import left_padded

    ids, mask = left_padded(prompts[:8], PAD_ID)
    ids, mask = ids.to(device), mask.to(device)
    with torch.inference_mode():
        unmerged = model(input_ids=ids, attention_mask=mask).logits[:, -1].float()
        with adapter_merged(model):
            merged = model(input_ids=ids, attention_mask=mask).logits[:, -1].float()
    return float((merged - unmerged).abs().max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", choices=sorted(SHAPES), default="tiny")
    parser.add_argument("--prompts", type=int, default=16)
    parser.add_argument("--answers", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--bandwidth-tbs", type=float, default=3.35, help="assumed memory bandwidth (H100 SXM)")
    parser.add_argument("--dtype", choices=["auto", "float32", "bfloat16"], default="auto")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dtype = {"auto": torch.bfloat16 if device.type == "cuda" else torch.float32,
             "float32": torch.float32, "bfloat16": torch.bfloat16}[args.dtype]
    model = build_model(args.shape, dtype, device)
    prompts = synthetic_prompts(args.prompts, SHAPES[args.shape]["vocab_size"])
    rows = args.prompts * args.answers
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(f"{args.shape} shape, {dtype}, on {where}: {args.prompts} prompts x {args.answers} answers x up to "
          f"{args.tokens} tokens, temperature 1, LoRA rank 16 on every linear layer")

    contenders: list[tuple[str, Callable[[], int]]] = [
        ("transformers backend, dynamic loop", transformers_backend(model, prompts, args.answers, args.tokens,
                                                                    device, "dynamic")),
        ("transformers backend, static cache" + (" + CUDA graphs" if device.type == "cuda" else " (no graphs: CPU)"),
         transformers_backend(model, prompts, args.answers, args.tokens, device,
                              "graphs" if device.type == "cuda" else "static")),
        ("HF generate()", hf_generate(model, prompts, args.answers, args.tokens, device)),
    ]
    results: list[tuple[str, float, float, int]] = []
    for name, run in contenders:
        warm_up, seconds, tokens = timed(run, device, args.repeats)
        results.append((name, warm_up, seconds, tokens))
    if importlib.util.find_spec("vllm") is None:
        print("vLLM: not installed here, skipped")
    elif device.type != "cuda":
        print("vLLM: skipped on the CPU (the bench compares GPU sampling)")
    else:
        with tempfile.TemporaryDirectory() as folder:
            run, engine = vllm_generate(model, prompts, args.answers, args.tokens, Path(folder))
            warm_up, seconds, tokens = timed(run, device, args.repeats)
            results.append(("vLLM offline generate, LoRA request", warm_up, seconds, tokens))
            del engine

    baseline = results[0][3] / results[0][2]
    for name, warm_up, seconds, tokens in results:
        rate = tokens / seconds
        print(f"  {name:<52} {rate:>10,.0f} answer tokens/s  ({tokens:,} tokens in {seconds:.2f} s; first call "
              f"{warm_up:.2f} s)  x{rate / baseline:.2f} of the dynamic loop")

    parameter_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    step_seconds = parameter_bytes / (args.bandwidth_tbs * 1e12)
    print(f"bandwidth bound: {parameter_bytes / 1e6:,.1f} MB of weights / {args.bandwidth_tbs} TB/s (assumed, not "
          f"measured) = {step_seconds * 1e3:.3f} ms a step -> at most {rows / step_seconds:,.0f} answer tokens/s at "
          f"{rows} rows (the KV cache's reads come on top)")
    print(f"merged vs unmerged adapter, largest next-token logit difference in {dtype}: "
          f"{merge_drift(model, prompts, device):.2e}")


if __name__ == "__main__":
    main()
