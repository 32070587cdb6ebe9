"""What a re-scoring's page and its API show: its row with the per-round signal under each reward, the groups that
gain or lose signal, and its answers (the moved ones, or all) read from its answers file in storage."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

from app.probes.reads import AnswersUnreadable
from app.runs.samples import ANSWER_CHARACTERS, shorten
from app.shell.identity import Identity
from domain.errors import NotFound
from projections import rescorings as reads

ANSWERS_SHOWN = 500  # the moved answers a page lists; the API pages through all of them


def rescoring_context(read_models: Any, identity: Identity, rescoring_id: UUID) -> dict[str, Any]:
    rescoring = reads.rescoring(read_models.tables, identity.organization_id, rescoring_id)
    if rescoring is None:
        raise NotFound("There is no such re-scoring.")
    summary = rescoring["summary"]
    return {
        "rescoring": rescoring,
        "rounds": reads.per_round(summary) if summary else [],
        "live": rescoring["live"],
        "section": "probes",  # under Tune, beside the reward probes
        "identity": identity,
    }


def stored_answers(storage: Any, summary: dict[str, Any], *, moved_only: bool, offset: int = 0,
                   limit: int = ANSWERS_SHOWN) -> list[dict[str, Any]]:
    """The answers file's lines from `offset` (of those kept: the moved ones, or all), at most `limit`; raises
    AnswersUnreadable with the reason."""
    if storage is None:
        raise AnswersUnreadable("this console has no storage configured.")
    key = summary.get("answers_key") or ""
    kept: list[dict[str, Any]] = []
    try:
        if not key or not storage.exists(key):
            raise AnswersUnreadable(f"{key or 'the answers file'} is not in the storage.")
        seen = 0
        for raw in storage.read_lines(key):
            answer = json.loads(raw)
            if moved_only and answer["new"] == answer["old"]:
                continue
            seen += 1
            if seen > offset:
                kept.append(answer)
            if len(kept) >= limit:
                break
    except AnswersUnreadable:
        raise
    except Exception as error:  # the storage's own error, named for the person who fixes the storage
        raise AnswersUnreadable(f"{type(error).__name__} while reading {key}.") from error
    return kept


def shown(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer as the page lists it: shortened as the run page's samples are."""
    return {**answer, "text": shorten(answer["text"], ANSWER_CHARACTERS),
            "reference": shorten(answer["reference"], ANSWER_CHARACTERS)}
