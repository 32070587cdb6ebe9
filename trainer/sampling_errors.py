"""The ways sampling fails, shared by the sampling backends and the decode loops they run."""

from __future__ import annotations


class SamplingOutOfMemory(RuntimeError):
    """The answers to sample did not fit in memory."""


class SamplingInterrupted(RuntimeError):
    """The time limit stopped sampling part-way."""
