"""Grading seconds per answer (issue 21's reward health): a round's answers are timed as the trainer grades them, and
its median and 95th percentile travel from the trainer's progress line to the run's round, its CSV and its page."""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Sequence

from app.runs.exports import rounds_csv
from domain.rewards.types import AnswerScore
from domain.runs.progress import RoundResult
from jobs.recording import round_result
from trainer.progress import PhaseSeconds, RoundScored, record_from_dict, record_to_dict
from trainer.sampling import SampledAnswer
from trainer.scoring import score_answers


class CharacterTokenizer:
    """Token ids that are character codes: enough for score_answers to read answers as text."""

    def decode(self, token_ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        return "".join(chr(i) for i in token_ids)


class SlowOnLongAnswers:
    """A built-in-like reward that takes 20 ms per answer of 3 characters and none on shorter ones; it keeps the
    size of every call it gets."""

    label = "slow · test"

    def __init__(self) -> None:
        self.calls: list[int] = []

    def score_batch(self, answers: Sequence[str], references: Sequence[str]) -> list[AnswerScore]:
        self.calls.append(len(answers))
        time.sleep(0.02 * sum(len(a) == 3 for a in answers))
        return [AnswerScore(float(a == r)) for a, r in zip(answers, references, strict=True)]


def group(*texts: str, cut_off: bool = False) -> list[SampledAnswer]:
    return [SampledAnswer([ord(c) for c in text], cut_off=cut_off) for text in texts]


def test_a_built_in_reward_grades_each_prompt_apart_so_a_slow_prompt_shows_in_the_95th_percentile() -> None:
    grader = SlowOnLongAnswers()
    # 18 quick prompts of 4 answers each and two slow ones: a tenth of the answers, past the 95th percentile's rank;
    # cut-off answers are not graded
    answers = [group("1", "2", "3", "4") for _ in range(18)] + [group("123", "456", "789", "000")] * 2
    answers.append(group("7", "8", "9", "0", cut_off=True))
    scored = score_answers(CharacterTokenizer(), grader, answers, ["1"] * 21)
    assert grader.calls == [4] * 20  # a call per prompt with graded answers
    assert len(scored.answer_seconds) == scored.graded == 80
    assert scored.grading_seconds_median is not None and scored.grading_seconds_median < 0.005
    assert scored.grading_seconds_p95 is not None and 0.018 <= scored.grading_seconds_p95 < 0.2


def test_a_round_whose_answers_were_all_cut_off_has_no_grading_seconds() -> None:
    scored = score_answers(CharacterTokenizer(), SlowOnLongAnswers(), [group("1", "2", cut_off=True)], ["1"])
    assert (scored.graded, scored.grading_seconds_median, scored.grading_seconds_p95) == (0, None, None)


def test_the_grading_seconds_reach_the_rounds_event_and_an_older_event_stays_valid() -> None:
    record = RoundScored(
        round=3, rounds=20, reward=0.41, signal=0.62, cut_off=0.02, metric_failures=0, graded_answers=128,
        failure_kinds=[], updated=True, loss=0.012, validation_reward=0.47, best_round=3,
        seconds=PhaseSeconds(81.2, 2.1, 64.0, 9.5), mean_answer_tokens=4.0, token_entropy=1.0, peak_memory_bytes=0,
        grading_seconds_median=0.0012, grading_seconds_p95=0.0305,
    )
    line = json.loads(json.dumps(record_to_dict(record)))  # as the supervisor reads the trainer's stdout

    result = round_result(record_from_dict(line))  # type: ignore[arg-type]

    assert (result.grading_seconds_median, result.grading_seconds_p95) == (0.0012, 0.0305)
    before = {k: v for k, v in result.to_dict().items() if not k.startswith("grading_seconds_")}
    older = RoundResult.from_dict(before)
    assert (older.grading_seconds_median, older.grading_seconds_p95) == (None, None)
    assert older.grading_seconds == 2.1  # the round's grading phase, which was always there


def test_the_rounds_csv_has_the_grading_seconds_columns(tmp_path) -> None:
    from uuid import uuid4

    from projections.rows import RoundRow

    row = RoundRow(
        run_id=uuid4(), round_number=1, rounds_total=2, reward=0.4, signal=0.5, cut_off=0.0, metric_failures=0,
        updated=True, loss=0.01, validation_reward=0.5, best_round=1, sampling_seconds=1.0, grading_seconds=1.0,
        update_seconds=1.0, validation_seconds=1.0, mean_answer_tokens=4.0, token_entropy=1.0, peak_memory_bytes=0,
        scored_at="2026-12-05T00:00:00+00:00", grading_seconds_median=0.0012,
        grading_seconds_p95=0.0305,
    )
    (line,) = csv.DictReader(io.StringIO(rounds_csv([row])))
    assert (line["grading_seconds_median"], line["grading_seconds_p95"]) == ("0.0012", "0.0305")
