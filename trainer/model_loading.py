"""Loading the policy: the base model (optionally quantized on a GPU), a new or continued LoRA adapter (on every
linear layer, or on the output head alone for Head)."""

from __future__ import annotations

import logging
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from trainer.fused_norm import fuse_rms_norms
from trainer.output_head import Trains, output_head_name, targets_only_head, widened_config
from trainer.spec import RunSpec
from trainer.storage import fetch_folder, file_sha256

if TYPE_CHECKING:
    from peft import PeftModel

log = logging.getLogger(__name__)

ADAPTER_WEIGHTS = "adapter_model.safetensors"
# peft warns whenever a LoRA targets a head tied to the input embedding; training one is safe (output_head.py).
TIED_HEAD_WARNING = r".*tie_word_embeddings.*"


class StartAdapterMismatch(RuntimeError):
    """The start adapter's weights are not the ones its run saved."""


class PolicyUnloadable(RuntimeError):
    """The settings ask for something this machine cannot do; the message says what."""


@dataclass
class Policy:
    model: PeftModel
    tokenizer: object
    device: torch.device
    end_ids: set[int]
    pad_id: int


def load_tokenizer(spec: RunSpec):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(spec.model.path_or_id, revision=spec.model.revision)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def end_token_ids(tokenizer, model_config=None) -> set[int]:
    """The tokens that end an answer: the tokenizer's end and the model's generation end tokens."""
    ids = {tokenizer.eos_token_id}
    for token in ("<|im_end|>", "<|eot_id|>", "<|end|>"):
        token_id = tokenizer.convert_tokens_to_ids(token)
        if isinstance(token_id, int) and token_id != tokenizer.unk_token_id:
            ids.add(token_id)
    generation_eos = getattr(getattr(model_config, "generation_config", None), "eos_token_id", None)
    if isinstance(generation_eos, int):
        ids.add(generation_eos)
    elif isinstance(generation_eos, list):
        ids.update(generation_eos)
    return {i for i in ids if i is not None}


def pick_device() -> torch.device:
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


def load_policy(spec: RunSpec, tokenizer, trains: Trains | None = None) -> Policy:
    """The base model with the adapter to train: `trains` says which layers (trainer/output_head.py); None, for an
    evaluation that trains nothing, loads a start adapter as it was saved."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    device = pick_device()
    options: dict = {"revision": spec.model.revision}
    if device.type == "cuda":
        options["dtype"] = torch.bfloat16
        if spec.quantization != "none":
            from transformers import BitsAndBytesConfig

            options["quantization_config"] = (
                BitsAndBytesConfig(load_in_8bit=True)
                if spec.quantization == "8bit"
                else BitsAndBytesConfig(
                    load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.bfloat16
                )
            )
            options["device_map"] = {"": 0}
    else:
        if spec.quantization != "none":
            raise PolicyUnloadable("Quantization (8-bit or 4-bit) needs a GPU; this machine has none.")
        options["dtype"] = torch.float32
    base = AutoModelForCausalLM.from_pretrained(spec.model.path_or_id, **options)
    if "device_map" not in options:
        base.to(device)
    base.config.use_cache = True
    fuse_rms_norms(base)  # one operation per norm instead of seven (trainer/fused_norm.py)

    if spec.start_adapter is not None:
        model = _continued_adapter(base, fetch_start_adapter(spec), trains)
    else:
        config = LoraConfig(
            r=spec.lora_rank,
            lora_alpha=spec.lora_alpha,
            lora_dropout=0.0,
            target_modules=[output_head_name(base)] if trains == "head" else "all-linear",
            task_type="CAUSAL_LM",
        )
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=TIED_HEAD_WARNING)  # tied: see trainer/output_head.py
            model = get_peft_model(base, config)
    model.train()
    return Policy(
        model=model,
        tokenizer=tokenizer,
        device=device,
        end_ids=end_token_ids(tokenizer, base),
        pad_id=tokenizer.pad_token_id,
    )


def _continued_adapter(base, folder: Path, trains: Trains | None):
    """A finished run's adapter, trainable. One that trained the head alone (a Head run's) gains every linear layer
    when the new run trains them, so RL from a Head run keeps its head and trains as RL always does."""
    from peft import LoraConfig, PeftModel, get_peft_model, set_peft_model_state_dict
    from safetensors.torch import load_file

    saved = LoraConfig.from_pretrained(str(folder))
    head_only = targets_only_head(saved.target_modules, output_head_name(base))
    if trains == "head" and not head_only:
        raise PolicyUnloadable(
            "Head trains the output head alone, and the adapter to start from changes more than the head: "
            "start from a Head run, or from the base model."
        )
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=TIED_HEAD_WARNING)
        if trains != "linear" or not head_only:
            return PeftModel.from_pretrained(base, str(folder), is_trainable=True)
        model = get_peft_model(base, widened_config(saved, base))
    loaded = set_peft_model_state_dict(model, load_file(str(folder / ADAPTER_WEIGHTS)))
    if loaded.unexpected_keys:
        raise StartAdapterMismatch("The adapter to start from holds weights its own config does not name.")
    return model


def fetch_start_adapter(spec: RunSpec) -> Path:
    """The start adapter's folder, checked against the checksum and size saved with its run."""
    assert spec.start_adapter is not None
    into = Path(tempfile.mkdtemp(prefix="verity-start-adapter-"))
    folder = fetch_folder(spec.start_adapter.path, into, spec.storage.endpoint_url)
    weights = folder / ADAPTER_WEIGHTS
    if not weights.exists():
        raise StartAdapterMismatch("The adapter to start from has no weights file in the storage.")
    size = weights.stat().st_size
    if size != spec.start_adapter.size_bytes or file_sha256(weights) != spec.start_adapter.sha256:
        raise StartAdapterMismatch(
            "The adapter to start from does not match the checksum and size saved with its run."
        )
    return folder


def peak_memory_bytes(device: torch.device) -> int:
    if device.type == "cuda":
        return int(torch.cuda.max_memory_allocated(device))
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024  # Linux reports KiB


def memory_total_bytes(device: torch.device) -> int | None:
    if device.type == "cuda":
        return int(torch.cuda.get_device_properties(device).total_memory)
    return None
