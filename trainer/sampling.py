"""Sampling answers: the backend interface and the Transformers backend (batched generation with a KV cache).

The vLLM backend lives in trainer/vllm_backend.py, the only module that imports vllm.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import torch

from trainer.attention_swap import attention_as
from trainer.kv_cache import CACHE_FIELD
from trainer.lean_step import LeanStep
from trainer.merged_adapter import MergedAdapter, is_quantized, merges_exactly
from trainer.prompt_cache import prompt_batch, read_prompts, select_rows
from trainer.prompt_once import ATTENTION as PROMPT_ONCE
from trainer.prompt_once import PromptOnceCache, decodes_prompt_once
from trainer.sampling_errors import SamplingInterrupted, SamplingOutOfMemory
from trainer.static_decode import StaticDecoder, rows_that_fit
from trainer.training_mode import set_training

log = logging.getLogger(__name__)

__all__ = ["SampledAnswer", "SamplingBackend", "SamplingInterrupted", "SamplingOutOfMemory", "TransformersBackend",
           "is_out_of_memory", "split_answer"]

DecodeMode = Literal["dynamic", "static", "graphs"]
CPU_ROWS_PER_BATCH = 512


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

    def random_state(self) -> Any:
        """The sampling generator's state, for a checkpoint."""
        ...

    def restore_random_state(self, state: Any) -> None: ...


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


class TransformersBackend:
    """Generation with the training model itself, batched, with a KV cache, in one of two decode loops:

    - "dynamic" (the CPU's): a hand-written loop rather than `generate()`: at temperature 1 with no top-k or top-p
      there is nothing to configure, and the loop drops every answer that has ended from the batch and its KV
      cache, so the long tail of one rambling answer does not keep the whole batch computing. Batches of
      CPU_ROWS_PER_BATCH answers.
    - "graphs" (CUDA's): a static KV cache and the step captured as a CUDA graph (trainer/static_decode.py), in
      batches sized to the free GPU memory; "static" is the same loop without capture (a quantized base on CUDA,
      whose kernels are not captured, and the CPU's tests of the loop).

    Both read the prompts' shared beginning once (trainer/prompt_cache.py); the dynamic loop's answers then read
    their prompt's cache in place, not a copy per answer (trainer/prompt_once.py). Where merging is exact
    (trainer/merged_adapter.py: a float base with untied adapted weights) the LoRA adapter is merged into the base
    weights for the duration of a `sample` call, and the base weights restored exactly after it; elsewhere (a
    quantized base) it is applied unmerged.
    """

    def __init__(self, model, pad_id: int, end_ids: set[int], device: torch.device, seed: int,
                 max_sequences_per_batch: int | None = None, decode: DecodeMode | None = None) -> None:
        self.model = model
        self.pad_id = pad_id
        self.end_ids = end_ids
        self.device = device
        self.max_sequences_per_batch = max_sequences_per_batch
        self.generator = torch.Generator(device=device).manual_seed(seed)
        self.merges = merges_exactly(model)
        self.merged_adapter = MergedAdapter(model) if self.merges else None
        self.decode = decode or default_decode(model, device)
        self.static = StaticDecoder(model, graphs=self.decode == "graphs")
        self.prompt_once = decodes_prompt_once(model)  # the dynamic loop's answers read their prompt's cache in place
        self.lean_step = LeanStep.of(model) if self.prompt_once else None  # its steps as bare operations

    def adapter_changed(self) -> None:
        """Nothing to do: generation reads (or merges) the adapter's live weights at each `sample`."""

    def random_state(self) -> torch.Tensor:
        return self.generator.get_state()

    def restore_random_state(self, state: torch.Tensor) -> None:
        self.generator.set_state(state)

    def sample(self, prompts, answers_per_prompt, max_answer_tokens, greedy, should_stop):
        prompts = [list(p) for p in prompts]
        answers: list[SampledAnswer] = []
        with self._sampling():
            per_batch = max(1, self._rows_per_batch(prompts, max_answer_tokens) // answers_per_prompt)
            for start in range(0, len(prompts), per_batch):
                chunk = prompts[start : start + per_batch]
                generated = self._generate(chunk, answers_per_prompt, max_answer_tokens, greedy, should_stop)
                answers.extend(split_answer(g, self.end_ids, max_answer_tokens) for g in generated)
        return [answers[i : i + answers_per_prompt] for i in range(0, len(answers), answers_per_prompt)]

    def sample_with_greedy(self, prompts, answers_per_prompt, greedy_prompts, max_answer_tokens, should_stop):
        """`sample(prompts, ..., greedy=False)` and `sample(greedy_prompts, 1, ..., greedy=True)` in one decode where
        the dynamic loop has them fit one batch (a round's answers and the validation sample: the validation's
        prompts are read, and its steps taken, with the round's). The draws are those `sample` makes for `prompts`
        alone: the likeliest answers draw nothing. → (sampled [prompts][answers], greedy [greedy_prompts][1])"""
        prompts, greedy_prompts = [list(p) for p in prompts], [list(p) for p in greedy_prompts]
        rows = len(prompts) * answers_per_prompt + len(greedy_prompts)
        if self.decode != "dynamic" or rows > self._rows_per_batch(prompts + greedy_prompts, max_answer_tokens):
            greedy = self.sample(greedy_prompts, 1, max_answer_tokens, True, should_stop)
            return self.sample(prompts, answers_per_prompt, max_answer_tokens, False, should_stop), greedy
        with self._sampling():
            generated = self._decode(prompts, answers_per_prompt, max_answer_tokens, False, should_stop,
                                     greedy_prompts=greedy_prompts)
        answers = [split_answer(g, self.end_ids, max_answer_tokens) for g in generated]
        greedy, sampled = answers[: len(greedy_prompts)], answers[len(greedy_prompts) :]
        return ([sampled[i : i + answers_per_prompt] for i in range(0, len(sampled), answers_per_prompt)],
                [[answer] for answer in greedy])

    @contextmanager
    def _sampling(self) -> Iterator[None]:
        """The model in evaluation mode, the adapter merged where that is exact, no autograd; a model out of memory
        raises SamplingOutOfMemory."""
        was_training = self.model.training
        set_training(self.model, False)
        try:
            merged = self.merges and self.merged_adapter is not None
            with self.merged_adapter.merged() if merged else nullcontext(), torch.inference_mode():  # type: ignore[union-attr]
                yield
        except (RuntimeError, MemoryError) as error:
            if is_out_of_memory(error):
                raise SamplingOutOfMemory(str(error)) from error
            raise
        finally:
            self.static.release()
            set_training(self.model, was_training)

    def _rows_per_batch(self, prompts: list[list[int]], max_answer_tokens: int) -> int:
        """The answers decoded together: as set, else as many as the free GPU memory holds, else CPU_ROWS_PER_BATCH."""
        if self.max_sequences_per_batch is not None:
            return self.max_sequences_per_batch
        if self.device.type != "cuda":
            return CPU_ROWS_PER_BATCH
        dtype = next(self.model.parameters()).dtype
        return rows_that_fit(self.model.config, max(len(p) for p in prompts), max_answer_tokens, dtype, self.device)

    def _generate(self, prompts: list[list[int]], copies: int, max_answer_tokens: int, greedy: bool, should_stop):
        if self.decode == "dynamic":
            return self._decode(prompts, copies, max_answer_tokens, greedy, should_stop)
        try:
            return self.static.decode(prompts, copies, max_answer_tokens, greedy, pad_id=self.pad_id,
                                      end_ids=self.end_ids, generator=self.generator, should_stop=should_stop)
        except (SamplingInterrupted, SamplingOutOfMemory):
            raise
        except Exception as error:  # the compiler or the graph capture failed on this machine
            if is_out_of_memory(error):
                raise
            # the static and captured paths are the fast ones, not the only one (they lean on the compiler and on
            # transformers' StaticCache of this machine): the run goes on with the dynamic loop, which samples from
            # the same distribution
            log.warning("Sampling with a static cache (%s) failed (%s); sampling goes on with the dynamic loop",
                        self.decode, error, exc_info=True)
            self.decode = "dynamic"
            return self._decode(prompts, copies, max_answer_tokens, greedy, should_stop)

    def _decode(self, prompts: list[list[int]], copies: int, max_answer_tokens: int, greedy: bool, should_stop,
                greedy_prompts: Sequence[list[int]] = ()):
        """→ the generated token ids of `copies` answers to each prompt (grouped by prompt), each ending with an
        end token or at the longest length. Each prompt is read once; its answers read its KV cache where it lies
        (trainer/prompt_once.py), or, where the model's attention is not one that does, a copy per answer. An answer
        that ended stays in the batch, fed padding, until a quarter of the batch has ended; then those rows are
        dropped together: one copy of the cache instead of one at every step where some answer ends (at 128 answers
        of the tiny model, the copies were a fifth of a sampling call on a CPU). The next tokens are drawn for the
        live answers alone, in order, so the draws are those of a batch of live answers only.

        `greedy_prompts` come first, one likeliest answer each, in the same batch: → their answers, then the rest.
        """
        read = read_prompts(self.model, prompt_batch([*greedy_prompts, *prompts], self.pad_id).to(self.device))
        likeliest = len(greedy_prompts)
        copy_of = torch.cat([torch.arange(likeliest, device=self.device),  # [rows]
                             likeliest + torch.arange(len(prompts), device=self.device).repeat_interleave(copies)])
        likeliest = len(copy_of) if greedy else likeliest  # rows [0, likeliest) take the likeliest token
        width = read.attention_mask.shape[1]
        cache = PromptOnceCache(read.cache, copy_of) if self.prompt_once else read.cache
        lean = self.lean_step if self.lean_step is not None and self.lean_step.fits() else None
        if copies > 1 and not self.prompt_once:
            select_rows(cache, copy_of)
        logits = read.next_logits[copy_of]  # [rows, vocab]
        attention_mask = read.attention_mask.new_zeros(len(copy_of), width + max_answer_tokens)
        attention_mask[:, :width] = read.attention_mask[copy_of]  # [rows, cache columns]
        next_position = read.next_position[copy_of]  # [rows]
        # let go of the read's cache: a PromptOnceCache holds the prompts' keys laid out anew, and rows sized to
        # free memory count the prompts' keys once
        del read
        answer_of = torch.arange(len(copy_of), device=self.device)  # which answer each row of the batch is
        live = torch.ones(len(copy_of), dtype=torch.bool, device=self.device)  # [rows]: still answering
        ended_rows = 0  # rows of the batch whose answer has ended
        generated: list[list[int]] = [[] for _ in range(len(copy_of))]
        end_ids = torch.tensor(sorted(self.end_ids), device=self.device)
        for step in range(max_answer_tokens):
            if should_stop():
                raise SamplingInterrupted("the time limit came while sampling")
            live_rows = live.nonzero().squeeze(1) if ended_rows else None  # None: every row
            live_logits = logits if live_rows is None else logits[live_rows]  # [live, vocab]
            tokens = self._next_tokens(live_logits, likeliest if live_rows is None
                                       else int((live_rows < likeliest).sum()))  # [live]
            answers = answer_of if live_rows is None else answer_of[live_rows]
            for answer, token in zip(answers.tolist(), tokens.tolist(), strict=True):
                generated[answer].append(token)
            ended = torch.isin(tokens, end_ids)  # [live]
            if step == max_answer_tokens - 1 or bool(ended.all()):
                break
            batch_tokens = tokens if live_rows is None else torch.full_like(live, self.pad_id, dtype=torch.long)
            if live_rows is not None:
                batch_tokens[live_rows] = tokens
            newly_ended = int(ended.sum())
            if newly_ended:
                if live_rows is None:
                    live &= ~ended
                else:
                    live[live_rows] = ~ended
                ended_rows += newly_ended
            if ended_rows * 4 >= len(live):  # drop the ended rows from the batch and the cache
                keep = live.nonzero().squeeze(1)
                likeliest = int((keep < likeliest).sum())  # the likeliest-token rows stay first
                if self.prompt_once:
                    cache.keep(keep)
                else:
                    select_rows(cache, keep)
                batch_tokens, attention_mask = batch_tokens[keep], attention_mask[keep]
                next_position, answer_of, live, ended_rows = next_position[keep], answer_of[keep], live[keep], 0
            attention_mask[:, width + step] = 1
            logits = self._step(batch_tokens, attention_mask[:, : width + step + 1], next_position, cache, lean)
            next_position = next_position + 1
        return generated

    def _step(self, tokens: torch.Tensor, attention_mask: torch.Tensor, positions: torch.Tensor, cache,
              lean: LeanStep | None):
        """One token of every row through the model, its keys and values added to `cache`: → the next token's
        logits [rows, vocab]. With a PromptOnceCache the attention reads each prompt's cache once for all its
        answers (trainer/prompt_once.py), which takes the mask as [rows, 1, 1, columns]; `lean` runs the step as
        its bare operations (trainer/lean_step.py)."""
        once = isinstance(cache, PromptOnceCache)
        if once and lean is not None:
            return lean(tokens, attention_mask[:, None, None, :].bool(), positions, cache)
        with attention_as(self.model, PROMPT_ONCE) if once else nullcontext():
            output = self.model(
                input_ids=tokens.unsqueeze(1),
                attention_mask=attention_mask[:, None, None, :].bool() if once else attention_mask,
                position_ids=positions.unsqueeze(1),
                **{CACHE_FIELD: cache},
                **({"prompt_once": cache} if once else {}),
                use_cache=True,
            )
        return output.logits[:, -1, :]

    def _next_tokens(self, logits: torch.Tensor, likeliest: int) -> torch.Tensor:
        """The likeliest token of the first `likeliest` rows, a token drawn at temperature 1 (every token) for the
        others. logits [rows, vocab] → [rows]"""
        tokens = [logits[:likeliest].argmax(dim=-1)] if likeliest else []
        if likeliest < len(logits):
            probabilities = torch.softmax(logits[likeliest:].float(), dim=-1)
            tokens.append(torch.multinomial(probabilities, 1, generator=self.generator).squeeze(1))
        return tokens[0] if len(tokens) == 1 else torch.cat(tokens)


def default_decode(model, device: torch.device) -> DecodeMode:
    """CUDA: the static cache with captured graphs, or without capture for a quantized base (bitsandbytes' kernels);
    elsewhere the dynamic loop, which drops ended answers and so does less work where every row costs."""
    if device.type != "cuda":
        return "dynamic"
    return "static" if is_quantized(model) else "graphs"
