"""Where a test reads a trajectory of the tiny model, the CPUs its settings were measured on.

The tiny model is built on the machine that runs the tests, and a few rounds of RL on it carry the CPU's rounding
far: the same seeded settings that collapse the policy's entropy on an Intel Xeon (AVX-512 or AMX) let it wander on
an AMD EPYC, whose tiny model also starts better. A test whose effect was measured on Intel's CPUs only says so with
`measured_on_intel_only`, and is skipped elsewhere, with the reason, rather than asserting what that CPU never shows.
Tests import it as `measured_cpus` (tests/conftest.py puts this folder on sys.path)."""

from __future__ import annotations

from pathlib import Path

import pytest


def cpu_vendor() -> str:
    """The CPU's vendor as Linux names it (GenuineIntel, AuthenticAMD), or "" where /proc/cpuinfo says none."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return ""
    return next((line.split(":", 1)[1].strip() for line in lines if line.startswith("vendor_id")), "")


def measured_on_intel_only(seen_on_amd: str) -> pytest.MarkDecorator:
    """Skips the test on a CPU other than Intel's; `seen_on_amd`: what an AMD EPYC's tiny model did instead."""
    return pytest.mark.skipif(cpu_vendor() not in ("GenuineIntel", ""),
                              reason=f"measured on Intel Xeons only; on an AMD EPYC {seen_on_amd}")
