"""What a probe's page and its API show: the probe's row with its verdict, the prompts most informative first, its
timeline, and one prompt's answers read from the answers file in storage."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

from app.runs.samples import ANSWER_CHARACTERS, PROMPT_CHARACTERS, last_user_message, shorten
from app.shell.identity import Identity
from domain.errors import NotFound
from projections import probes as reads

PROMPTS_SHOWN = 256  # every prompt a probe may have


class AnswersUnreadable(Exception):
    """Why a probe's answers can't be read, in words for the page."""


def probe_context(read_models: Any, identity: Identity, probe_id: UUID) -> dict[str, Any]:
    probe = reads.probe(read_models.tables, identity.organization_id, probe_id)
    if probe is None:
        raise NotFound("There is no such probe.")
    summary = probe["summary"]
    histogram = summary["histogram"] if summary else []
    return {
        "probe": probe,
        "prompts": reads.informative_prompts(summary)[:PROMPTS_SHOWN] if summary else [],
        "histogram": [
            {"bin": f"{i / len(histogram):.1f}–{(i + 1) / len(histogram):.1f}", "count": n,
             "share": n / max(sum(histogram), 1)}
            for i, n in enumerate(histogram)
        ],
        "live": probe["live"],
        "timeline": read_models.timeline(identity.organization_id, probe_id),  # its events in words, as a run's
        "section": "probes",
        "identity": identity,
    }


def prompt_answers(storage: Any, summary: dict[str, Any], line: int) -> dict[str, Any]:
    """The prompt at `line` of the answers file: its last user message, reference and every answer, shortened as
    the run page's samples are; raises AnswersUnreadable with the reason."""
    if storage is None:
        raise AnswersUnreadable("this console has no storage configured.")
    key = summary.get("answers_key") or ""
    try:
        if not key or not storage.exists(key):
            raise AnswersUnreadable(f"{key or 'the answers file'} is not in the storage.")
        for number, raw in enumerate(storage.read_lines(key)):
            if number == line:
                data = json.loads(raw)
                return {
                    "prompt": shorten(last_user_message(data["prompt"]), PROMPT_CHARACTERS),
                    "reference": shorten(str(data["reference"]), ANSWER_CHARACTERS),
                    "answers": [{**answer, "answer": shorten(answer["answer"], ANSWER_CHARACTERS)}
                                for answer in sorted(data["answers"], key=lambda a: -a["reward"])],
                }
    except AnswersUnreadable:
        raise
    except Exception as error:  # the storage's own error, named for the person who fixes the storage
        raise AnswersUnreadable(f"{type(error).__name__} while reading {key}.") from error
    raise AnswersUnreadable(f"{key} has no prompt {line + 1}.")


def with_probed_reward(read_models: Any, identity: Identity, probe_id: UUID, draft: Any) -> Any:
    """Use this reward: the Configure form's draft with the probe's reward, its prompts' Dataset version (none for
    Math Pairs), answers per prompt and longest sampled answer."""
    probe = reads.probe(read_models.tables, identity.organization_id, probe_id)
    if probe is None:
        raise NotFound("There is no such probe.")
    source = probe["source"]
    return draft.with_values(
        reward=probe["reward"], answers_per_prompt=probe["answers_per_prompt"],
        max_answer_tokens=probe["max_answer_tokens"],
        dataset_version=source.get("id") if source.get("kind") == "dataset_version" else None,
    )
