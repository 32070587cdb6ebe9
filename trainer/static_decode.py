"""Decoding with a static KV cache, every step the same shapes: on a GPU the step is captured once as a CUDA graph
and replayed, the Transformers backend's GPU path (trainer/sampling.py chooses it by device).

Why. On a GPU the dynamic loop is bound by Python and kernel launches, not by the GPU: a 0.5B model took ~52 ms a
step where reading its 1 GB of weights takes ~0.3 ms (notes/gpu-h200.md). A captured step is one graph launch.

Layout. The prompts are read as the dynamic loop reads them (trainer/prompt_cache.py: the shared beginning once),
then their cache is copied, one row per answer, into transformers' StaticCache: per layer [rows, kv_heads,
cache_length, head_dim], cache_length = the prompts' width + the longest answer, rounded up to CACHE_LENGTH_STEP so
that rounds of slightly different prompts reuse one capture. Answer token t of every row goes to column width + t;
the attention mask [rows, cache_length] marks each row's real columns; each row keeps its own positions (its prompt
is left-padded).

What it gives up. An answer that has ended stays in the batch (its next tokens are padding and ignored), because
the shapes are fixed: on a GPU a step costs about the same for 64 live rows as for 512, and the loop stops when
every row has ended, checked every ALL_ENDED_CHECK steps, the loop's only wait on the GPU.

Sampling at temperature 1 is the exponential race: argmax(p / E) with E ~ Exp(1) drawn per token, which picks token
i with probability p_i (the Gumbel-max trick), on the device with the backend's generator and no wait on the host.
It draws other numbers than torch.multinomial, so sampled answers match the dynamic loop's in distribution, not
draw for draw (tests/trainer/test_static_decode.py).

Capture. torch.compile(mode="reduce-overhead") of the step (model forward → last logits): inductor fuses the small
kernels and records the step as a CUDA graph per shape (rows, cache_length); StaticCache marks its tensors as static
addresses and advances its write position in place, so a replay needs no host work. Sampling stays outside the
graph (torch.compile does not take an explicit generator). Graph mode pads the rows to a power of two (extra answers
to the first prompt, dropped) so that batches of other sizes reuse a few shapes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from trainer.kv_cache import CACHE_FIELD
from trainer.prompt_cache import prompt_batch, read_prompts
from trainer.sampling_errors import SamplingInterrupted

CACHE_LENGTH_STEP = 128  # cache lengths are rounded up to a multiple: fewer shapes, fewer captures
ALL_ENDED_CHECK = 8  # steps between checks that every answer has ended (a host sync each)
MAX_ROWS = 2048  # rows per batch on a GPU at most, however much memory is free
MEMORY_SHARE = 0.7  # of the free GPU memory that a batch's cache and logits may take

DecodeStep = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, Any], torch.Tensor]


def eager_step(model) -> DecodeStep:
    """One token per row through the model: → the next token's logits [rows, vocab]."""

    def step(input_ids: torch.Tensor, position_ids: torch.Tensor, attention_mask: torch.Tensor, cache) -> torch.Tensor:
        output = model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                       use_cache=True, **{CACHE_FIELD: cache})
        return output.logits[:, -1, :]

    return step


def graphed_step(model) -> DecodeStep:
    """eager_step compiled and captured as a CUDA graph per shape (module docstring: Capture). Its logits live in the
    graph's memory until the next replay, which is when the loop is done with them."""
    compiled = torch.compile(eager_step(model), mode="reduce-overhead", dynamic=False)

    def step(input_ids: torch.Tensor, position_ids: torch.Tensor, attention_mask: torch.Tensor, cache) -> torch.Tensor:
        torch.compiler.cudagraph_mark_step_begin()  # each call is a new step: the last one's outputs may be reused
        return compiled(input_ids, position_ids, attention_mask, cache)

    return step


def next_tokens(logits: torch.Tensor, greedy: bool, generator: torch.Generator) -> torch.Tensor:
    """The next token of each row: the likeliest, or drawn at temperature 1 by the exponential race.
    logits [rows, vocab] → [rows]"""
    if greedy:
        return logits.argmax(dim=-1)
    probabilities = torch.softmax(logits.float(), dim=-1)  # [rows, vocab]
    race = torch.empty_like(probabilities).exponential_(generator=generator)  # [rows, vocab]
    return (probabilities / race).argmax(dim=-1)


class StaticDecoder:
    """Decodes batches of answers with a static cache, eagerly (the CPU's tests) or through captured graphs (CUDA).
    The cache is kept between the batches of one `sample` call (same shapes, same addresses for the graphs) and
    let go by `release`, so that the update after sampling has the memory back."""

    def __init__(self, model, graphs: bool) -> None:
        self.model = model
        self.graphs = graphs
        self.step = graphed_step(model) if graphs else eager_step(model)
        self._cache: Any = None
        self._cache_shape: tuple = ()

    def release(self) -> None:
        self._cache, self._cache_shape = None, ()

    def decode(self, prompts: list[list[int]], copies: int, max_answer_tokens: int, greedy: bool, *, pad_id: int,
               end_ids: set[int], generator: torch.Generator, should_stop: Callable[[], bool]) -> list[list[int]]:
        """→ the generated token ids of `copies` answers to each prompt (grouped by prompt), each up to and past its
        first end token (split_answer cuts there) or `max_answer_tokens` long. Two prompts, copies=2, in graph mode:
        4 answers in 4 rows; three prompts, copies=2: 6 answers in 8 rows, the last 2 answering the first prompt
        and dropped."""
        device = generator.device
        read = read_prompts(self.model, prompt_batch(prompts, pad_id).to(device))
        answers = len(prompts) * copies
        rows = _next_power_of_two(answers) if self.graphs else answers
        copy_of = torch.arange(len(prompts), device=device).repeat_interleave(copies)  # [answers]
        copy_of = torch.cat([copy_of, copy_of.new_zeros(rows - answers)])  # [rows]: padding answers the first prompt
        width = read.attention_mask.shape[1]
        cache_length = -(-(width + max_answer_tokens) // CACHE_LENGTH_STEP) * CACHE_LENGTH_STEP
        cache = self._filled_cache(read.cache, copy_of, cache_length)
        attention_mask = read.attention_mask.new_zeros(rows, cache_length)  # [rows, cache_length]
        attention_mask[:, :width] = read.attention_mask[copy_of]
        positions = read.next_position[copy_of].unsqueeze(1)  # [rows, 1]
        logits = read.next_logits[copy_of]  # [rows, vocab]
        end_tensor = torch.tensor(sorted(end_ids), device=device)
        generated = torch.full((rows, max_answer_tokens), pad_id, dtype=torch.long, device=device)  # [rows, tokens]
        ended = torch.zeros(rows, dtype=torch.bool, device=device)  # [rows]
        steps = max_answer_tokens
        for step in range(max_answer_tokens):
            if should_stop():
                raise SamplingInterrupted("the time limit came while sampling")
            tokens = next_tokens(logits, greedy, generator).masked_fill(ended, pad_id)  # [rows]
            generated[:, step] = tokens
            ended |= torch.isin(tokens, end_tensor)
            if step == max_answer_tokens - 1 or ((step + 1) % ALL_ENDED_CHECK == 0 and bool(ended.all())):
                steps = step + 1
                break
            attention_mask[:, width + step] = 1
            logits = self.step(tokens.unsqueeze(1), positions, attention_mask, cache)
            positions = positions + 1
        return generated[:answers, :steps].tolist()

    def _filled_cache(self, prompt_cache, copy_of: torch.Tensor, cache_length: int):
        """A StaticCache of len(copy_of) rows and `cache_length` columns holding row copy_of[i] of the prompts'
        cache in row i's first columns, its write position just after them."""
        from transformers import StaticCache

        layers = prompt_cache.layers
        width = layers[0].keys.shape[2]
        shape = (len(copy_of), cache_length, layers[0].keys.dtype, layers[0].keys.device)
        if self._cache_shape != shape:
            self._cache = None  # let the old one go before the new one is allocated
            cache = StaticCache(config=self.model.config, max_cache_len=cache_length)
            cache.early_initialization(batch_size=len(copy_of), num_heads=[layer.keys.shape[1] for layer in layers],
                                       head_dim=[layer.keys.shape[3] for layer in layers], dtype=shape[2],
                                       device=shape[3])
            self._cache, self._cache_shape = cache, shape
        for static, read in zip(self._cache.layers, layers, strict=True):
            static.keys[:, :, :width] = read.keys.index_select(0, copy_of)
            static.values[:, :, :width] = read.values.index_select(0, copy_of)
            static.cumulative_length.fill_(width)
        return self._cache


def rows_that_fit(config, longest_prompt: int, max_answer_tokens: int, dtype: torch.dtype,
                  device: torch.device) -> int:
    """How many answers one GPU batch may decode: MEMORY_SHARE of the free memory (what the driver has free and
    what torch holds unused) over one row's static cache and logits, a power of two (shapes reused), 1 to MAX_ROWS.
    A 0.5B Qwen2 shape (24 layers, 2 KV heads of 64, vocabulary 151,936) in bf16 at 384 columns takes 4.7 MB of
    cache and 2.7 MB of logits and sampling buffers a row: about 5,000 rows in 60 GB free, so MAX_ROWS."""
    free, _ = torch.cuda.mem_get_info(device)
    free += torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
    per_row = row_bytes(config, longest_prompt + max_answer_tokens, dtype)
    rows = max(1, min(MAX_ROWS, int(MEMORY_SHARE * free // per_row)))
    return 1 << (rows.bit_length() - 1)


def row_bytes(config, tokens: int, dtype: torch.dtype) -> int:
    """One row's memory while decoding: its static cache (keys and values of every layer over the rounded-up
    cache length, its prompt part once more while the prompts' cache is copied in), its logits with the float
    copies sampling makes (probabilities, the race's draws, their quotient), and a step's activations."""
    text = config.get_text_config(decoder=True)
    heads = text.num_attention_heads
    kv_heads = getattr(text, "num_key_value_heads", None) or heads  # transformers' configs differ by model type
    head_dim = getattr(text, "head_dim", None) or text.hidden_size // heads
    element = torch.empty((), dtype=dtype).element_size()
    columns = -(-tokens // CACHE_LENGTH_STEP) * CACHE_LENGTH_STEP
    cache = 2 * text.num_hidden_layers * kv_heads * head_dim * (columns + tokens) * element
    logits = text.vocab_size * (element + 3 * 4)
    activations = (4 * text.hidden_size + 3 * text.intermediate_size) * element
    return cache + logits + activations


def _next_power_of_two(count: int) -> int:
    return 1 << (count - 1).bit_length()
