"""A user names a reward through the API or a form; it is validated and reads back as a full reward."""

from __future__ import annotations

import uuid

import pytest

from domain.rewards.config import RewardConfig, RewardConfigInvalid

VERSION_ID = str(uuid.UUID("12345678-1234-5678-1234-567812345678"))


def refused(data: dict, **kwargs) -> RewardConfigInvalid:
    with pytest.raises(RewardConfigInvalid) as caught:
        RewardConfig.from_dict(data, **kwargs)
    return caught.value


def test_a_qa_reward_reads_back_with_every_key_and_its_label():
    reward = RewardConfig.from_dict({"preset": "qa", "metric": "token_f1"})
    assert reward.label == "Token F1 · Q&A"
    assert reward.to_dict() == {
        "preset": "qa",
        "metric": "token_f1",
        "labels": [],
        "response_schema": None,
        "fields": [],
        "absolute_tolerance": 0.0,
        "relative_tolerance": 0.0,
        "custom_metric": None,
        "synthetic_prompts": None,
        "format_bonus": False,
    }
    assert RewardConfig.from_dict(reward.to_dict()) == reward


@pytest.mark.parametrize(
    ("data", "label"),
    [
        ({"preset": "qa", "metric": "exact_match"}, "Exact match · Q&A"),
        ({"preset": "qa", "metric": "normalized_exact_match"}, "Normalized exact match · Q&A"),
        (
            {"preset": "classification", "metric": "accuracy", "labels": ["yes", "no"]},
            "Accuracy · Classification",
        ),
        (
            {"preset": "structured_json", "metric": "schema_validity", "response_schema": {"type": "object"}},
            "Schema validity · Structured JSON",
        ),
        ({"preset": "structured_json", "metric": "field_match"}, "Field match · Structured JSON"),
        ({"preset": "numeric", "metric": "numeric_accuracy"}, "Numeric accuracy · Numeric"),
        ({"preset": "verifiable", "metric": "math_pairs"}, "Math Pairs · Verifiable"),
        ({"preset": "verifiable", "metric": "gsm8k"}, "GSM8K accuracy · Verifiable"),
        ({"preset": "verifiable", "metric": "boxed"}, "Boxed-answer accuracy · Verifiable"),
        ({"preset": "qa", "metric": f"custom.{VERSION_ID}"}, "Custom metric · Q&A"),
    ],
)
def test_every_metric_has_a_label_and_round_trips(data, label):
    reward = RewardConfig.from_dict(data)
    assert reward.label == label
    assert RewardConfig.from_dict(reward.to_dict()) == reward


def test_the_verifiable_defaults_come_from_001():
    math_pairs = RewardConfig.from_dict({"preset": "verifiable", "metric": "math_pairs"})
    assert (math_pairs.synthetic_prompts, math_pairs.format_bonus) == (256, True)
    gsm8k = RewardConfig.from_dict({"preset": "verifiable", "metric": "gsm8k", "format_bonus": False})
    assert (gsm8k.synthetic_prompts, gsm8k.format_bonus) == (None, False)


@pytest.mark.parametrize("count", [8, 100_000])
def test_synthetic_prompts_accepts_its_bounds(count):
    data = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": count}
    assert RewardConfig.from_dict(data).synthetic_prompts == count


@pytest.mark.parametrize("count", [7, 100_001, 12.5, True, "256"])
def test_synthetic_prompts_outside_8_to_100000_is_refused(count):
    error = refused({"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": count})
    assert error.message == "Synthetic prompts must be a whole number from 8 to 100,000."
    assert error.field == "synthetic_prompts"


def test_settings_a_preset_does_not_use_are_cleared():
    reward = RewardConfig.from_dict(
        {"preset": "qa", "metric": "token_f1", "labels": ["a"], "absolute_tolerance": 3}
    )
    assert (reward.labels, reward.absolute_tolerance) == ((), 0.0)


def test_a_custom_metric_is_named_by_its_version_id_in_either_field():
    from_metric = RewardConfig.from_dict({"preset": "numeric", "metric": f"custom.{VERSION_ID.upper()}"})
    both = RewardConfig.from_dict(
        {"preset": "numeric", "metric": f"custom.{VERSION_ID}", "custom_metric": VERSION_ID}
    )
    assert from_metric == both
    assert both.custom_metric == VERSION_ID and both.metric == f"custom.{VERSION_ID}" and both.is_custom
    assert both.label_with_custom_name("exact_year", 3) == "exact_year (v3) · Numeric"


@pytest.mark.parametrize(
    ("data", "message", "field"),
    [
        ({"preset": "essay", "metric": "token_f1"}, "Unknown kind of answers 'essay'", "preset"),
        ({"preset": "qa", "metric": "bleu"}, "Unknown reward metric 'bleu' for Q&A answers", "metric"),
        ({"preset": "qa"}, "Choose a reward for RL: the metric that scores each sampled answer.", "metric"),
        (
            {"preset": "qa", "metric": "token_f1", "colour": 1},
            "The reward has unknown fields: colour.",
            "colour",
        ),
        ({"preset": "classification", "metric": "accuracy"}, "Classification needs Allowed labels", "labels"),
        (
            {"preset": "classification", "metric": "accuracy", "labels": []},
            "Classification needs Allowed",
            "labels",
        ),
        ({"preset": "classification", "metric": "accuracy", "labels": ["a", "A"]}, "must differ", "labels"),
        (
            {"preset": "classification", "metric": "accuracy", "labels": ["a", " "]},
            "an empty label",
            "labels",
        ),
        ({"preset": "classification", "metric": "accuracy", "labels": "a,b"}, "a list of text", "labels"),
        (
            {"preset": "structured_json", "metric": "schema_validity"},
            "needs a JSON schema",
            "response_schema",
        ),
        (
            {"preset": "structured_json", "metric": "schema_validity", "response_schema": {"name": "x"}},
            "The JSON schema must be a JSON Schema object",
            "response_schema",
        ),
        (
            {"preset": "structured_json", "metric": "schema_validity", "response_schema": {"type": "thing"}},
            "The JSON schema is not valid: ",
            "response_schema",
        ),
        (
            {"preset": "structured_json", "metric": "schema_validity", "response_schema": "object"},
            "The JSON schema must be a JSON Schema object",
            "response_schema",
        ),
        (
            {"preset": "structured_json", "metric": "field_match", "fields": [1]},
            "Fields to compare",
            "fields",
        ),
        (
            {"preset": "numeric", "metric": "numeric_accuracy", "absolute_tolerance": -0.1},
            "Absolute tolerance can't be negative.",
            "absolute_tolerance",
        ),
        (
            {"preset": "numeric", "metric": "numeric_accuracy", "relative_tolerance": -1},
            "Relative tolerance can't be negative.",
            "relative_tolerance",
        ),
        (
            {"preset": "numeric", "metric": "numeric_accuracy", "relative_tolerance": "0.1"},
            "Relative tolerance must be a number.",
            "relative_tolerance",
        ),
        (
            {"preset": "verifiable", "metric": "gsm8k", "format_bonus": "yes"},
            "Format bonus must be",
            "format_bonus",
        ),
        (
            {"preset": "qa", "metric": "custom.my-metric"},
            "'my-metric' is not a custom metric version ID",
            "custom_metric",
        ),
        (
            {"preset": "qa", "metric": "token_f1", "custom_metric": VERSION_ID},
            f"custom_metric is set, so the metric must be custom.{VERSION_ID}",
            "custom_metric",
        ),
        (
            {"preset": "qa", "metric": f"custom.{VERSION_ID}", "custom_metric": str(uuid.uuid4())},
            "but custom_metric is",
            "custom_metric",
        ),
        ([], "The reward must be an object with a preset and a metric.", "reward"),
    ],
)
def test_a_reward_that_cannot_be_used_is_refused_in_words(data, message, field):
    error = refused(data)
    assert message in error.message
    assert error.field == field


def test_the_judge_and_radeval_are_never_a_reward():
    assert refused({"preset": "qa", "metric": "llm_judge"}).message == (
        "The LLM judge can't be an RL reward: only a person or another model can judge its answers. "
        "Choose a reward metric."
    )
    assert refused({"preset": "qa", "metric": "radeval"}).message.startswith("RadEval can't be an RL reward")


def test_a_baselines_judge_metric_gives_no_default_reward():
    error = refused({"preset": "qa", "metric": "llm_judge"}, from_baseline=True)
    assert (
        error.message
        == "The baseline's main metric, LLM judge, can't be an RL reward. Choose a reward metric."
    )
    error = refused({"preset": "qa", "metric": "radeval"}, from_baseline=True)
    assert (
        error.message == "The baseline's main metric, RadEval, can't be an RL reward. Choose a reward metric."
    )
