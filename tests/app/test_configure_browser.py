"""Configure a run in headless Chromium, against one `verity serve` for the module: the form saves what the person
chose and says what is true.

The data folder is seeded before the server starts (no worker runs anything here): a dataset version of speeds
with numeric references and a completed baseline of it scored by Numeric accuracy, a finished run "first adapter"
whose adapter has size 8 and scaling 16, and a custom metric exact_year in its second version. Screenshots of the
form for RL and for SFT land in artifacts/configure-rl.png and artifacts/configure-sft.png.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

import httpx
import pytest
from consoles import ARTIFACTS, chromium, needs_chromium, record_trained, served_console, sign_in

MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs"}
EXACT_YEAR = "def score(answer, reference):\n    return 1.0 if reference in answer else 0.0\n"

pytestmark = [pytest.mark.browser, needs_chromium]


@dataclass
class Seeded:
    url: str
    email: str
    password: str
    token: str
    version: str  # a dataset version of speeds, numeric references
    baseline: str  # its completed baseline, main metric Numeric accuracy
    source: str  # "first adapter": a finished run with an adapter of size 8, scaling 16
    custom: str  # exact_year (v2)

    def api(self, method: str, path: str, **body) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.token}"}
        return httpx.request(method, f"{self.url}/api{path}", json=body or None, headers=headers, timeout=30)


def _speeds(folder: Path) -> dict:
    from app.datasets.upload import UploadedFile

    files = {}
    for split, numbers in {"train": range(1, 9), "validation": range(20, 24), "test": range(40, 44)}.items():
        rows = [{"messages": [{"role": "user", "content": f"A train covers {2 * n} km in 2 hours. Speed in km/h?"},
                              {"role": "assistant", "content": str(n)}]} for n in numbers]
        path = folder / f"{split}.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        files[split] = UploadedFile(path.name, path.open("rb"))
    return files


def _seed(data_dir: Path) -> dict[str, str]:
    from app.datasets.upload import record_stored_version, store_version_files
    from domain.actors import Actor
    from domain.custom_metrics import CustomMetric
    from domain.runs.settings import run_body_from_api
    from verity.config import Settings
    from verity.storage import open_storage
    from verity.wiring import build_application, ensure_default_organization

    owner = Actor("person", "owner@localhost", "owner@localhost")
    settings = Settings(data_dir=data_dir)
    verity = build_application(settings)
    org_id, project_id = ensure_default_organization(settings, verity)
    storage = open_storage(settings)
    dataset_id = verity.create_dataset(org_id, "speeds", owner).id
    version = record_stored_version(
        verity, storage, store_version_files(storage, _speeds(data_dir.parent)), org_id, dataset_id, owner
    ).id
    baseline = verity.create_evaluation(
        org_id, project_id, name="Base on speeds", source={"kind": "dataset_version", "id": str(version)},
        scoring={"preset": "numeric"}, main_metric="numeric_accuracy", actor=owner,
    ).id
    verity.record_evaluation_started(baseline)
    verity.record_evaluation_completed(baseline, 0.25, {"score": 0.25}, [])
    body = {"name": "first adapter", "training": {"rl": {"rounds": 1, "reward": MATH_PAIRS},
                                                  "advanced": {"lora_rank": 8, "lora_alpha": 16}}}
    source = verity.save_run(org_id, project_id, run_body_from_api(body), owner).id
    verity.launch_run(org_id, source, owner, "owner")
    record_trained(verity, source)
    verity.record_completed(source)
    verity.register_custom_metric(org_id, "exact_year", EXACT_YEAR, owner)
    metric_id = CustomMetric.create_id(org_id, "exact_year")
    custom = verity.edit_custom_metric(org_id, metric_id, EXACT_YEAR.replace("1.0", "1"), owner).id
    return {"version": str(version), "baseline": str(baseline), "source": str(source), "custom": str(custom)}


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> Iterator[Seeded]:
    data_dir = tmp_path_factory.mktemp("verity-configure") / "data"
    ids = _seed(data_dir)
    with served_console(data_dir) as served:
        yield Seeded(served.url, served.email, served.password, served.token, **ids)


@pytest.fixture(scope="module")
def page(seeded: Seeded):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = chromium(playwright)
        page = browser.new_context(viewport={"width": 1360, "height": 1000}).new_page()
        page.set_default_timeout(10_000)
        sign_in(page, seeded.url, seeded.email, seeded.password, lands="/**")
        yield page
        browser.close()


def _change(page, selector: str, value: str) -> None:
    """Choose an option and wait until the console's answer is drawn: htmx swaps the parts it redraws out of band
    before it replaces the Training Summary, so the old summary leaving the page says everything is in place. A
    field typed into with `page.fill` sends its own change when the choice takes the focus from it, and its answer
    could be taken for the choice's: type with `_type`, which waits for that answer."""
    drawn = page.locator("#training-summary").element_handle()
    with page.expect_response(lambda response: response.url.endswith("/runs/summary")):
        page.select_option(selector, value)
    page.wait_for_function("summary => !summary.isConnected", arg=drawn)


def _type(page, selector: str, value: str) -> None:
    """Type a value and leave the field, waiting as `_change` does for the summary the change redraws."""
    drawn = page.locator("#training-summary").element_handle()
    with page.expect_response(lambda response: response.url.endswith("/runs/summary")):
        page.fill(selector, value)
        page.press(selector, "Tab")
    page.wait_for_function("summary => !summary.isConnected", arg=drawn)


def _summary(page, label: str):
    return page.locator(f"#training-summary dt:text-is('{label}') + dd")


def _run_fact(page, label: str):
    return page.locator(f"#run-summary dt:text-is('{label}') + dd")


def _saved_run(page, seeded: Seeded) -> dict:
    """Save the form as it stands; the run as the API reads it."""
    page.click("#save-button")
    page.wait_for_url(f"{seeded.url}/runs/*-*-*-*-*")
    return seeded.api("GET", f"/runs/{page.url.rsplit('/', 1)[-1]}").json()


def test_the_baselines_reward_is_chosen_in_the_form_and_saved(seeded: Seeded, page) -> None:
    from playwright.sync_api import expect

    page.goto(f"{seeded.url}/runs/new")
    _type(page, "#input-name", "from the baseline")
    _change(page, "#input-dataset_version", seeded.version)
    expect(page.locator(f"#input-baseline option[value='{seeded.baseline}']")).to_have_count(1)
    _change(page, "#input-baseline", seeded.baseline)
    # 000: "For a run with a baseline, the reward starts as that baseline's scoring and main metric"
    expect(page.locator("[data-reward-from-baseline]")).to_have_text(
        "Taken from the baseline's scoring and main metric. Change a field to train toward another reward.")
    expect(_summary(page, "Reward")).to_have_text("Numeric accuracy · Numeric")
    expect(page.locator("#input-reward_preset")).to_have_value("")

    _change(page, "#input-reward_preset", "qa")  # another reward, then back to the baseline's
    expect(_summary(page, "Reward")).to_have_text("Exact match · Q&A")
    _change(page, "#input-reward_preset", "")
    expect(_summary(page, "Reward")).to_have_text("Numeric accuracy · Numeric")
    expect(page.locator("#input-reward_preset")).to_have_value("")
    expect(page.locator("#input-baseline_reward")).to_have_value("Numeric accuracy · Numeric")

    reward = _saved_run(page, seeded)["settings"]["training"]["rl"]["reward"]
    assert (reward["preset"], reward["metric"]) == ("numeric", "numeric_accuracy")
    expect(_run_fact(page, "Reward")).to_have_text("Numeric accuracy · Numeric")


def test_math_pairs_on_a_dataset_version_says_its_rows_are_not_used(seeded: Seeded, page) -> None:
    from playwright.sync_api import expect

    not_used = "Math Pairs makes its own prompts: the Dataset version's rows are not used."
    page.goto(f"{seeded.url}/runs/new")
    expect(_summary(page, "Training prompts")).to_have_text("Math Pairs makes its own prompts.")
    _change(page, "#input-dataset_version", seeded.version)  # the Demo's reward stays Math Pairs
    expect(_summary(page, "Training prompts")).to_have_text(not_used)
    expect(page.locator("#training-summary .notice-warn")).to_have_text(not_used)
    run = _saved_run(page, seeded)
    assert run["settings"]["dataset_version"] == seeded.version
    expect(_run_fact(page, "Training prompts")).to_have_text(not_used)


def test_sft_shows_only_its_own_fields_saves_its_defaults_and_confirms_in_epochs(seeded: Seeded, page) -> None:
    from playwright.sync_api import expect

    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(f"{seeded.url}/runs/new")
    expect(page.locator("#field-rounds")).to_be_visible()
    page.screenshot(path=str(ARTIFACTS / "configure-rl.png"), full_page=True)

    _type(page, "#input-name", "sft on speeds")
    _change(page, "#input-objective", "sft")
    for rl_only in ("#field-rounds", "#field-prompts_per_round", "#field-answers_per_prompt",
                    "#field-max_answer_tokens", "#section-reward", "#field-baseline", "#field-loss_type",
                    "#field-generation_backend", "#field-vllm_gpu_memory", "#field-beta", "#field-rl_epochs",
                    "#field-clip_low", "#field-clip_high", "#field-max_grad_norm"):
        expect(page.locator(rl_only)).to_be_hidden()
    for shown in ("#field-epochs", "#field-batch_size", "#field-start_run", "#field-micro_batch_size"):
        expect(page.locator(shown)).to_be_visible()
    expect(page.locator("#section-rl legend")).to_have_text("Start from")
    expect(page.locator("#input-learning_rate")).to_have_value("0.0002")  # SFT's own, where RL's was 0.0005
    _change(page, "#input-dataset_version", seeded.version)
    expect(_summary(page, "Method")).to_have_text("SFT · supervised fine-tuning on LoRA")
    page.screenshot(path=str(ARTIFACTS / "configure-sft.png"), full_page=True)

    run = _saved_run(page, seeded)  # the defaults as they stand: Batch size 8 beside the Demo's micro batch 32
    assert run["settings"]["training"]["sft"]["batch_size"] == 8 and run["state"] == "draft"
    confirmation = page.locator("#run-status .run-actions .muted").first
    expect(confirmation).to_have_text(
        "A full SFT run: 3 epochs in steps of 8 examples, stopped by its time limit of 2 hours at the latest.")


def test_a_draft_is_edited_duplicated_and_deleted_from_its_page(seeded: Seeded, page) -> None:
    from playwright.sync_api import expect

    saved = seeded.api("POST", "/runs", name="to edit", training={"rl": {"rounds": 3, "reward": MATH_PAIRS}})
    run_id = saved.json()["run"]["id"]
    page.goto(f"{seeded.url}/runs/{run_id}")
    page.click("#edit-draft")
    page.wait_for_url(f"{seeded.url}/runs/{run_id}/edit")
    expect(page.locator("#input-name")).to_have_value("to edit")
    expect(page.locator("#input-rounds")).to_have_value("3")
    page.fill("#input-rounds", "5")
    page.click("#save-button")
    page.wait_for_url(f"{seeded.url}/runs/{run_id}")  # the same run, not a new one
    expect(_run_fact(page, "Rounds")).to_have_text("5")
    page.click("text=Timeline")
    expect(page.locator(".timeline")).to_contain_text("edited the draft “to edit”: Rounds.")

    page.goto(f"{seeded.url}/runs/{run_id}")
    page.click("button:has-text('Duplicate')")
    page.wait_for_url(lambda url: url.endswith(tuple("0123456789abcdef")) and run_id not in url)
    expect(page.locator("h1")).to_have_text("to edit (copy)")

    page.goto(f"{seeded.url}/runs/{run_id}")
    page.once("dialog", lambda dialog: dialog.accept())  # Delete asks first
    page.click("button:has-text('Delete')")
    page.wait_for_url(f"{seeded.url}/runs")
    expect(page.locator(f"a[href='/runs/{run_id}']")).to_have_count(0)
    expect(page.locator("table")).to_contain_text("to edit (copy)")
    feed = seeded.api("GET", "/events?after=0&limit=1000").json()  # the feed carries both events
    kinds = [(e["type"], e["aggregate_id"]) for e in feed["events"]]
    assert ("Run.Edited", run_id) in kinds and ("Run.Deleted", run_id) in kinds


def test_start_from_locks_the_adapter_to_the_source_and_the_run_names_it(seeded: Seeded, page) -> None:
    from playwright.sync_api import expect

    page.goto(f"{seeded.url}/runs/new")
    _type(page, "#input-name", "continued")
    _change(page, "#input-start_run", seeded.source)
    for name, value in (("lora_rank", "8"), ("lora_alpha", "16")):
        expect(page.locator(f"#input-{name}")).to_have_value(value)
        expect(page.locator(f"#input-{name}")).to_have_attribute("readonly", "")
        expect(page.locator(f"#hint-{name}")).to_contain_text("Taken from “first adapter”")
    expect(_summary(page, "LoRA rank")).to_have_text("8")
    run = _saved_run(page, seeded)
    assert run["settings"]["training"]["advanced"]["lora_rank"] == 8
    starts_from = _run_fact(page, "Starts from").locator("a")
    expect(starts_from).to_have_text("first adapter")
    expect(starts_from).to_have_attribute("href", f"/runs/{seeded.source}")

    refused = seeded.api("POST", "/runs", name="other size", training={
        "rl": {"start_run": seeded.source, "reward": MATH_PAIRS}, "advanced": {"lora_rank": 16}})
    assert refused.status_code == 422
    assert refused.json()["errors"]["lora_rank"].startswith("Adapter size (LoRA rank) is 8, the adapter size of")


def test_a_trial_and_a_custom_reward_show_the_numbers_they_will_use(seeded: Seeded, page) -> None:
    from playwright.sync_api import expect

    page.goto(f"{seeded.url}/runs/new")
    _type(page, "#input-name", "years, tried")
    _change(page, "#input-kind", "trial")
    expect(page.locator("#input-prompts_per_round")).to_have_value("16")  # the Demo project's own number
    _change(page, "#input-reward_preset", "qa")
    _change(page, "#input-reward_metric", f"custom.{seeded.custom}")
    expect(_summary(page, "Prompts per round")).to_have_text("8 (a trial uses at most 8)")
    expect(_summary(page, "Reward")).to_have_text("exact_year (v2) · Q&A")
    _saved_run(page, seeded)
    expect(_run_fact(page, "Prompts per round")).to_have_text("8 (a trial uses at most 8)")
    expect(_run_fact(page, "Reward")).to_have_text("exact_year (v2) · Q&A")
    assert UUID(page.url.rsplit("/", 1)[-1])


def test_rl_epochs_the_clip_range_and_the_gradient_norm_are_advanced_settings(seeded: Seeded, page) -> None:
    from playwright.sync_api import expect

    page.goto(f"{seeded.url}/runs/new")
    _type(page, "#input-name", "two passes a round")
    for name, default in (("rl_epochs", "1"), ("clip_low", "0.2"), ("clip_high", "0.2"), ("max_grad_norm", "1")):
        expect(page.locator(f"#field-{name}")).to_be_visible()
        expect(page.locator(f"#input-{name}")).to_have_value(default)
    expect(_summary(page, "Epochs")).to_have_count(0)  # one pass: GRPO as the documents give it
    _type(page, "#input-rl_epochs", "5")
    expect(page.locator("#field-rl_epochs")).to_contain_text("Epochs must be a whole number from 1 to 4.")
    _type(page, "#input-rl_epochs", "2")
    expect(_summary(page, "Epochs")).to_have_text("2 passes over each round's answers")
    _type(page, "#input-clip_high", "0.28")
    _type(page, "#input-max_grad_norm", "")

    run = _saved_run(page, seeded)

    training = run["settings"]["training"]
    assert training["rl"]["epochs"] == 2 and "rl_epochs" not in training["rl"]
    assert (training["advanced"]["clip_low"], training["advanced"]["clip_high"]) == (0.2, 0.28)
    assert training["advanced"]["max_grad_norm"] is None
    expect(_run_fact(page, "Epochs")).to_have_text("2 passes a round, ratio clipped to 0.8-1.28")
