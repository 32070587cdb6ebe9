"""001's Accuracy: a round's mean "correct" part, from the trainer's scores to the rounds read model."""

from __future__ import annotations

from domain.rewards.config import RewardConfig
from domain.rewards.registry import build_grader
from trainer.sampling import SampledAnswer
from trainer.scoring import score_answers


class CharTokenizer:
    """Token ids are character codes: enough to turn sampled ids back into text."""

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        return "".join(chr(i) for i in ids)


def answer(text: str, cut_off: bool = False) -> SampledAnswer:
    return SampledAnswer(token_ids=[ord(c) for c in text], cut_off=cut_off)


def test_accuracy_is_the_mean_correct_part_and_a_cut_off_answer_counts_as_wrong() -> None:
    grader = build_grader(RewardConfig.from_dict({"preset": "verifiable", "metric": "math_pairs"}))
    answers = [
        [answer("<think>2+2</think><answer>4</answer>"), answer("5"), answer("4"), answer("4", cut_off=True)],
    ]
    scored = score_answers(CharTokenizer(), grader, answers, ["4"])
    assert scored.accuracy == 0.5  # two right of four; the cut-off one is never graded
    assert float(scored.rewards[0, 0]) > float(scored.rewards[0, 2]) > 0  # the format bonus is in the reward only


def test_a_reward_without_parts_has_no_accuracy() -> None:
    grader = build_grader(RewardConfig.from_dict({"preset": "qa", "metric": "token_f1"}))
    scored = score_answers(CharTokenizer(), grader, [[answer("80 km/h"), answer("80")]], ["80"])
    assert scored.accuracy is None
