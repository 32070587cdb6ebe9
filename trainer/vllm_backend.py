"""The vLLM sampling backend, colocated with training on one GPU. The only module that imports vllm.

The LoRA adapter is given to vLLM as a LoRA request, never merged into the base weights: after each update the
adapter is saved to a fresh folder and the next sample names it with a new request id (vLLM caches adapters by
id). vLLM keeps `vllm_gpu_memory` of the GPU for itself; training uses the rest.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from trainer.sampling import SampledAnswer, SamplingInterrupted, SamplingOutOfMemory, is_out_of_memory, split_answer
from trainer.spec import RunSpec


class VllmBackend:
    def __init__(self, spec: RunSpec, policy) -> None:
        from vllm import LLM

        options = {}
        if spec.quantization == "4bit":
            options["quantization"] = "bitsandbytes"  # vLLM quantizes in flight; 8-bit stays on the training side
        self.llm = LLM(
            model=spec.model.path_or_id,
            revision=spec.model.revision,
            tokenizer=spec.model.path_or_id,
            dtype="bfloat16",
            enable_lora=True,
            max_lora_rank=max(spec.lora_rank, _adapter_rank(policy)),
            max_loras=1,
            gpu_memory_utilization=spec.vllm_gpu_memory,
            max_model_len=spec.training_window,
            seed=spec.seed,
            enable_prefix_caching=True,
            **options,
        )
        self.policy = policy
        self.end_ids = policy.end_ids
        self.seed = spec.seed
        self.adapter_root = Path(tempfile.mkdtemp(prefix="verity-vllm-lora-"))
        self.version = 0
        self.adapter_changed()

    def adapter_changed(self) -> None:
        """Save the live adapter to a new folder for the next LoRA request; drop the previous one."""
        self.version += 1
        folder = self.adapter_root / f"v{self.version}"
        self.policy.model.save_pretrained(str(folder))
        previous = self.adapter_root / f"v{self.version - 1}"
        if previous.exists():
            shutil.rmtree(previous, ignore_errors=True)
        self.adapter_folder = folder

    def sample(self, prompts, answers_per_prompt, max_answer_tokens, greedy, should_stop):
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt
        from vllm.lora.request import LoRARequest

        params = SamplingParams(
            n=answers_per_prompt,
            temperature=0.0 if greedy else 1.0,
            top_p=1.0,
            top_k=0,  # every token: temperature 1 whatever the model's sampling defaults
            max_tokens=max_answer_tokens,
            stop_token_ids=sorted(self.end_ids),
            seed=None if greedy else self.seed * 1_000_003 + self.version,
            skip_special_tokens=True,
        )
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
        return [[self._answer(completion, max_answer_tokens) for completion in out.outputs] for out in outputs]

    def _answer(self, completion, max_answer_tokens: int) -> SampledAnswer:
        tokens = list(completion.token_ids)
        if completion.finish_reason == "stop" and (not tokens or tokens[-1] not in self.end_ids):
            stop = completion.stop_reason if isinstance(completion.stop_reason, int) else min(self.end_ids)
            tokens.append(stop)  # count the end token as the Transformers backend does
        if completion.finish_reason == "length":
            return SampledAnswer(token_ids=tokens[:max_answer_tokens], cut_off=True)
        return split_answer(tokens, self.end_ids, max_answer_tokens)


def _adapter_rank(policy) -> int:
    return int(policy.model.peft_config["default"].r)
