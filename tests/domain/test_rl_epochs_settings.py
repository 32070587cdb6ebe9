"""RL's Epochs, clip range and gradient-norm clipping as settings: where the API body holds them
(`training.rl.epochs` beside SFT's `training.sft.epochs`), their bounds in the form's words, and what the trainer's
spec receives."""

from __future__ import annotations

import pytest

from domain.errors import SettingsInvalid
from domain.runs.drafts import changed_settings
from domain.runs.run_settings import RunSettings
from domain.runs.settings import run_body_from_api, run_body_from_form
from jobs.specs import training_spec


def refused(body: dict) -> dict[str, str]:
    with pytest.raises(SettingsInvalid) as refusal:
        run_body_from_api(body)
    return refusal.value.errors


def test_the_api_holds_rl_epochs_in_training_rl_apart_from_sfts_epochs():
    chosen = run_body_from_api({"training": {"rl": {"epochs": 2},
                                             "advanced": {"clip_high": 0.28, "max_grad_norm": 0.5}}})
    assert (chosen.rl_epochs, chosen.epochs, chosen.clip_low, chosen.clip_high, chosen.max_grad_norm) == (
        2, 3, 0.2, 0.28, 0.5)
    body = chosen.to_api()
    assert body["training"]["rl"]["epochs"] == 2 and "rl_epochs" not in body["training"]["rl"]
    assert {key: body["training"]["advanced"][key] for key in ("clip_low", "clip_high", "max_grad_norm")} == {
        "clip_low": 0.2, "clip_high": 0.28, "max_grad_norm": 0.5}
    assert RunSettings.from_saved(body) == chosen.saved()
    assert RunSettings.from_saved(body).rl_epochs == 2

    sft = run_body_from_api({"training": {"objective": "sft", "sft": {"epochs": 5, "batch_size": 8}}})
    assert (sft.epochs, sft.rl_epochs) == (5, 1)
    assert sft.to_api()["training"]["sft"] == {"epochs": 5, "batch_size": 8}


def test_the_defaults_are_one_pass_trls_clip_range_and_a_gradient_norm_of_one():
    chosen = run_body_from_api({})
    assert (chosen.rl_epochs, chosen.clip_low, chosen.clip_high, chosen.max_grad_norm) == (1, 0.2, 0.2, 1.0)


@pytest.mark.parametrize(("body", "field", "message"), [
    ({"rl": {"epochs": 0}}, "rl_epochs", "Epochs must be a whole number from 1 to 4."),
    ({"rl": {"epochs": 5}}, "rl_epochs", "Epochs must be a whole number from 1 to 4."),
    ({"rl": {"epochs": 1.5}}, "rl_epochs", "Epochs must be a whole number from 1 to 4."),
    ({"advanced": {"clip_low": 0}}, "clip_low", "Clip range low (ε low) must be a number from 0.01 to 0.9."),
    ({"advanced": {"clip_low": 0.95}}, "clip_low", "Clip range low (ε low) must be a number from 0.01 to 0.9."),
    ({"advanced": {"clip_high": 1.5}}, "clip_high", "Clip range high (ε high) must be a number from 0.01 to 1."),
    ({"advanced": {"max_grad_norm": 0}}, "max_grad_norm",
     "Max gradient norm must be a number above 0, or empty for no limit."),
    ({"advanced": {"max_grad_norm": "lots"}}, "max_grad_norm",
     "Max gradient norm must be a number above 0, or empty for no limit."),
])
def test_each_out_of_bounds_value_is_refused_in_the_forms_words(body, field, message):
    assert refused({"training": body}) == {field: message}


def test_the_form_names_rl_epochs_and_leaves_the_gradient_unclipped_when_empty():
    chosen = run_body_from_form({"rl_epochs": "3", "clip_low": "0.1", "clip_high": "0.28", "max_grad_norm": ""})
    assert (chosen.rl_epochs, chosen.clip_low, chosen.clip_high, chosen.max_grad_norm) == (3, 0.1, 0.28, None)
    with pytest.raises(SettingsInvalid) as refusal:
        run_body_from_form({"rl_epochs": "9"})
    assert refusal.value.errors == {"rl_epochs": "Epochs must be a whole number from 1 to 4."}


def test_the_trainer_receives_them_and_a_trial_makes_the_full_runs_passes():
    chosen = run_body_from_api({"training": {"rl": {"epochs": 2}, "advanced": {"clip_high": 0.28}}})
    for settings in (chosen, chosen.with_values(kind="trial")):
        spec = training_spec(settings)
        assert (spec["epochs"], spec["clip_low"], spec["clip_high"], spec["max_grad_norm"]) == (2, 0.2, 0.28, 1.0)
    assert training_spec(chosen.with_values(max_grad_norm=None))["max_grad_norm"] is None


def test_an_edit_names_the_new_settings_and_an_sft_run_ignores_rls():
    assert changed_settings(RunSettings(), RunSettings(rl_epochs=2, max_grad_norm=None)) == [
        "Epochs", "Max gradient norm"]
    sft = RunSettings(objective="sft")
    assert changed_settings(sft, sft.with_values(rl_epochs=2, clip_high=0.28, epochs=4)) == ["Epochs"]
