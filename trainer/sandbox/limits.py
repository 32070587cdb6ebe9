"""What one batch of a custom metric may use in the sandbox.

The product numbers (PRODUCT.md, "Custom metric", kept in domain/rewards/custom.py): a batch of up to 8
answers, 30 s and 512 MiB per batch, 64 KiB of output. The rest are ours: a metric needs no child processes,
few open files and little disk.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from domain.rewards.custom import BATCH_MEMORY_BYTES, BATCH_SECONDS, BATCH_SIZE, OUTPUT_BYTES

MIB = 1024 * 1024


@dataclass(frozen=True)
class SandboxLimits:
    """Limits that each batch of answers runs under, in one child process.

    Example: `SandboxLimits(batch_seconds=2)` keeps a test of a metric that loops forever short.
    """

    batch_size: int = BATCH_SIZE
    batch_seconds: float = BATCH_SECONDS  # wall clock, and (rounded up) CPU time
    memory_bytes: int = BATCH_MEMORY_BYTES  # address space of the child
    output_bytes: int = OUTPUT_BYTES  # stdout and stderr together
    open_files: int = 64
    file_bytes: int = 16 * MIB  # the largest file the metric may write
    scratch_bytes: int = 64 * MIB  # its private folder, where a tmpfs can be mounted
    parallel_batches: int = 2  # batches run at once; each may use memory_bytes

    def __post_init__(self) -> None:
        if self.batch_size < 1 or self.parallel_batches < 1:
            raise ValueError("batch_size and parallel_batches must be at least 1")
        if self.batch_seconds <= 0 or self.memory_bytes <= 0 or self.output_bytes < 0:
            raise ValueError("time, memory and output limits must be positive")

    def as_json(self) -> dict[str, float | int]:
        return asdict(self)
