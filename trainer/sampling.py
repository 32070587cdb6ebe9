"""Sampling answers: the backend interface and the Transformers backend (batched generation with a KV cache).

The vLLM backend lives in trainer/vllm_backend.py, the only module that imports vllm.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import torch


class SamplingOutOfMemory(RuntimeError):
    """The answers to sample did not fit in memory."""


class SamplingInterrupted(RuntimeError):
    """The time limit stopped sampling part-way."""


@dataclass(frozen=True)
class SampledAnswer:
    """One answer's tokens (with its end token when it ended) and whether it reached the longest length first."""

    token_ids: list[int]
    cut_off: bool


class SamplingBackend(Protocol):
    def sample(
        self,
        prompts: Sequence[Sequence[int]],
        answers_per_prompt: int,
        max_answer_tokens: int,
        greedy: bool,
        should_stop: Callable[[], bool],
    ) -> list[list[SampledAnswer]]:
        """Answers per prompt: [prompts][answers]. Greedy for validation, temperature 1 otherwise."""
        ...

    def adapter_changed(self) -> None:
        """The adapter's weights changed: the next sample must use the new ones."""
        ...


def split_answer(generated: Sequence[int], end_ids: set[int], max_answer_tokens: int) -> SampledAnswer:
    """Keep the tokens up to and with the first end token; an answer without one that reached the longest length is
    cut off.

    >>> split_answer([5, 6, 2, 0, 0], end_ids={2}, max_answer_tokens=5)
    SampledAnswer(token_ids=[5, 6, 2], cut_off=False)
    >>> split_answer([5, 6, 7], end_ids={2}, max_answer_tokens=3)
    SampledAnswer(token_ids=[5, 6, 7], cut_off=True)
    """
    for index, token in enumerate(generated):
        if token in end_ids:
            return SampledAnswer(token_ids=list(generated[: index + 1]), cut_off=False)
    tokens = list(generated[:max_answer_tokens])
    return SampledAnswer(token_ids=tokens, cut_off=len(tokens) >= max_answer_tokens)


def is_out_of_memory(error: BaseException) -> bool:
    """CUDA's OutOfMemoryError, or the CPU allocator failing."""
    if isinstance(error, torch.OutOfMemoryError | MemoryError):
        return True
    return isinstance(error, RuntimeError) and "can't allocate memory" in str(error)


class _StopWhen:
    """A generation stopping criterion that ends every sequence once `should_stop()` says so."""

    def __init__(self, should_stop: Callable[[], bool]) -> None:
        self.should_stop = should_stop
        self.fired = False

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, **kwargs) -> torch.Tensor:
        self.fired = self.fired or self.should_stop()
        return torch.full((input_ids.shape[0],), self.fired, dtype=torch.bool, device=input_ids.device)


class TransformersBackend:
    """Generation with the training model itself (the LoRA adapter applied unmerged), batched, with a KV cache."""

    def __init__(self, model, pad_id: int, end_ids: set[int], device: torch.device, seed: int,
                 max_sequences_per_batch: int = 512) -> None:
        self.model = model
        self.pad_id = pad_id
        self.end_ids = end_ids
        self.device = device
        self.max_sequences_per_batch = max_sequences_per_batch
        self.generator_seed = seed
        self.calls = 0

    def adapter_changed(self) -> None:
        """Nothing to do: generation reads the adapter's live weights."""

    def sample(self, prompts, answers_per_prompt, max_answer_tokens, greedy, should_stop):
        from transformers import GenerationConfig, StoppingCriteriaList

        sequences = [list(p) for p in prompts for _ in range(answers_per_prompt)]  # grouped by prompt
        config = GenerationConfig(
            do_sample=not greedy,
            temperature=1.0,
            top_k=0,
            top_p=1.0,
            max_new_tokens=max_answer_tokens,
            eos_token_id=sorted(self.end_ids),
            pad_token_id=self.pad_id,
        )
        self.calls += 1
        torch.manual_seed(self.generator_seed * 1_000_003 + self.calls)  # reproducible sampling per call
        stop = _StopWhen(should_stop)
        answers: list[SampledAnswer] = []
        was_training = self.model.training
        self.model.eval()
        try:
            for start in range(0, len(sequences), self.max_sequences_per_batch):
                chunk = sequences[start : start + self.max_sequences_per_batch]
                input_ids, attention_mask = _left_pad(chunk, self.pad_id, self.device)  # [seqs, prompt_width]
                with torch.inference_mode():
                    output = self.model.generate(
                        input_ids=input_ids,
                        attention_mask=attention_mask,
                        generation_config=config,
                        stopping_criteria=StoppingCriteriaList([stop]),
                    )  # [seqs, prompt_width + generated]
                if stop.fired:
                    raise SamplingInterrupted("the time limit came while sampling")
                generated = output[:, input_ids.shape[1] :].tolist()
                answers.extend(split_answer(g, self.end_ids, max_answer_tokens) for g in generated)
        except SamplingInterrupted:
            raise
        except (RuntimeError, MemoryError) as error:
            if is_out_of_memory(error):
                raise SamplingOutOfMemory(str(error)) from error
            raise
        finally:
            self.model.train(was_training)
        return [answers[i : i + answers_per_prompt] for i in range(0, len(answers), answers_per_prompt)]


def _left_pad(sequences: list[list[int]], pad_id: int, device: torch.device):
    width = max(len(s) for s in sequences)
    input_ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)  # [seqs, width]
    attention_mask = torch.zeros_like(input_ids)
    for row, sequence in enumerate(sequences):
        input_ids[row, width - len(sequence) :] = torch.tensor(sequence, dtype=torch.long)
        attention_mask[row, width - len(sequence) :] = 1
    return input_ids.to(device), attention_mask.to(device)
