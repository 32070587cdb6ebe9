"""A reward probe's events in the audit timeline, each a sentence in the console's words, as a run's are
(projections/timeline.py files both, the probe's under its own id)."""

from __future__ import annotations

from typing import Any

from domain.probes.verdict import SIGNAL_NAMES, signal_of
from projections.base import Event


def probe_sentence(e: Event, who: str, probe: dict[str, Any] | None) -> str:
    """`probe`: the probe's row in the probes view (its prompts and answers per prompt never change), None when
    the view does not hold it.

    >>> from types import SimpleNamespace as Seen
    >>> row = {"prompts": 16, "answers_per_prompt": 8}
    >>> probe_sentence(Seen(type="Probe.Sampling", data={}), "Prober", row)
    'Sampling 16 prompts × 8 answers.'
    >>> probe_sentence(Seen(type="Probe.Scored", data={"summary": {
    ...     "prompts": 16, "varied_prompts": 8, "varied_share": 0.5}}), "Prober", row)
    'Scored: 8 of 16 prompts have answers that differ (usable signal).'
    >>> probe_sentence(Seen(type="Probe.Cancelled", data={}), "Ada", row)
    'Cancelled by Ada.'
    """
    data = e.data
    match e.type.removeprefix("Probe."):
        case "Saved":
            return (f"Probe “{data['name']}” saved by {who}: {data['prompts']} prompts × "
                    f"{data['answers_per_prompt']} answers.")
        case "Sampling" if probe is not None:
            return f"Sampling {probe['prompts']} prompts × {probe['answers_per_prompt']} answers."
        case "Sampling":
            return "Sampling the prompts' answers."
        case "Scored":
            return f"Scored: {_varied_words(data['summary'])}."
        case "Failed":
            return f"Failed: {data['message']}"
        case "Cancelled":
            return f"Cancelled by {who}."
    return f"{who}: {e.type}."


def _varied_words(summary: dict[str, Any]) -> str:
    prompts, varied = int(summary["prompts"]), int(summary["varied_prompts"])
    signal = SIGNAL_NAMES[signal_of(float(summary["varied_share"]))].lower()
    if varied == 0:
        return f"none of {prompts} prompts has answers that differ ({signal})"
    return f"{varied} of {prompts} prompts {'has' if varied == 1 else 'have'} answers that differ ({signal})"
