"""Which settings Compare runs lists first: those that differ, in the form's words and order, then those shared;
and when a prompt number names the same prompt in every compared run."""

from __future__ import annotations

from app.runs.compare_settings import NOT_USED, prompts_apart, settings_compared
from domain.runs.run_settings import RunSettings

MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 16, "format_bonus": True}


def _rl(**values: object) -> RunSettings:
    return RunSettings(reward=MATH_PAIRS, **values)


def test_only_the_settings_that_differ_come_first_in_the_forms_words_and_order() -> None:
    compared = settings_compared([
        _rl(learning_rate=5e-4, seed=0, rounds=2),
        _rl(learning_rate=1e-5, seed=0, rounds=3),
        _rl(learning_rate=1e-5, seed=0, rounds=2),
    ])
    assert [(s.label, s.values) for s in compared.differing] == [
        ("Rounds", ("2", "3", "2")),  # Reinforcement learning comes before Advanced settings in the form
        ("Learning rate", ("0.0005", "1e-05", "1e-05")),
    ]
    shared = {s.label: s.values for s in compared.shared}
    assert shared["Seed"] == ("0", "0", "0") and shared["Loss type"] == ("GRPO",) * 3
    assert "Name" not in shared  # a name tells runs apart; it is not a setting of how they train
    assert not {s.name for s in compared.differing} & {s.name for s in compared.shared}


def test_runs_that_differ_in_nothing_share_every_setting() -> None:
    compared = settings_compared([_rl(name="a"), _rl(name="b")])
    assert compared.differing == []
    assert len(compared.shared) > 20


def test_a_setting_one_objective_uses_and_the_others_do_not_differs_and_reads_as_not_used() -> None:
    compared = settings_compared([_rl(), RunSettings(objective="sft", reward=None)])
    differing = {s.name: s.values for s in compared.differing}
    assert differing["objective"][1].startswith("SFT")
    assert differing["rounds"] == ("20", NOT_USED)  # RL's alone
    assert differing["epochs"] == (NOT_USED, "3")  # SFT's, DPO's and Head's alone
    assert "beta" not in differing and "beta" not in {s.name for s in compared.shared}  # DPO's: no run uses it


def test_the_callers_words_name_a_value_and_two_rewards_of_one_label_show_what_sets_them_apart() -> None:
    bigger = {**MATH_PAIRS, "synthetic_prompts": 64}
    compared = settings_compared(
        [_rl(), RunSettings(reward=bigger)],
        [{"reward": "Math Pairs"}, {"reward": "Math Pairs"}],
    )
    reward = next(s for s in compared.differing if s.name == "reward")
    assert reward.values[0].startswith("Math Pairs (") and "synthetic_prompts 16" in reward.values[0]
    assert "synthetic_prompts 64" in reward.values[1]
    same = settings_compared([_rl(), _rl()], [{"reward": "Math Pairs"}, {"reward": "Math Pairs"}])
    assert next(s for s in same.shared if s.name == "reward").values == ("Math Pairs", "Math Pairs")


def test_a_prompt_number_names_the_same_prompt_only_where_the_runs_draw_from_the_same_prompts() -> None:
    assert prompts_apart([_rl(learning_rate=5e-4), _rl(learning_rate=1e-5)]) is None
    assert "Seeds differ" in (prompts_apart([_rl(seed=1), _rl(seed=2)]) or "")
    assert "Dataset version or Reward" in (prompts_apart([
        RunSettings(dataset_version="v1", reward={"preset": "qa", "metric": "token_f1"}),
        RunSettings(dataset_version="v2", reward={"preset": "qa", "metric": "token_f1"}),
    ]) or "")
    # a Dataset version's rows do not depend on the seed
    assert prompts_apart([
        RunSettings(dataset_version="v1", seed=1, reward={"preset": "qa", "metric": "token_f1"}),
        RunSettings(dataset_version="v1", seed=2, reward={"preset": "qa", "metric": "token_f1"}),
    ]) is None
    assert "Only RL runs" in (prompts_apart([_rl(), RunSettings(objective="sft")]) or "")
