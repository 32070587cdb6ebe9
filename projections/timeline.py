"""The audit timeline of each run: every run event with its time, its actor and a sentence in the console's words.
A reward probe's events are filed the same way under the probe's id (their sentences: projections/probe_timeline.py).
"""

from __future__ import annotations

from domain.runs import alarms, messages, objectives
from domain.runs.run_resume import continued_sentence, resumed_on_worker_sentence, resumed_sentence, unit_of
from domain.storage_keys import storage_key
from projections.base import Event, Projection
from projections.directory import directory_entry
from projections.probe_timeline import probe_sentence
from projections.tables import Tx


class Timeline(Projection):
    """The audit of each run: every event with its time, its actor and a sentence."""

    name = "timeline"

    def apply(self, tx: Tx, event: Event) -> None:
        if not event.type.startswith(("Run.", "Probe.")):
            return
        place = directory_entry(tx, event)
        if place is None:
            return
        actor = event.actor
        if event.type.startswith("Probe."):
            words = probe_sentence(event, actor["name"], tx.get("probes", {"id": event.aggregate_key}))
        else:
            words = sentence(event, actor["name"], place["total_rounds"], _objective_of(tx, event), name=place["name"])
        tx.write(  # nothing of the page reads the timeline back
            "timeline",
            {
                "log_position": event.position,
                "org_id": place["org_id"],
                "run_id": event.aggregate_key,
                "occurred_at": event.time,
                "actor_kind": actor["kind"],
                "actor_id": actor["id"],
                "actor_name": actor["name"],
                "event_type": event.type.removeprefix("Run.").removeprefix("Probe."),
                "sentence": words,
            },
        )


def _objective_of(tx: Tx, e: Event) -> str:
    """The run's objective, from the Runs view (applied before the timeline) or the event's own settings."""
    if "settings" in e.data:
        return str(e.data["settings"].objective)
    row = tx.peek("runs", {"id": e.aggregate_key})
    return str(row["objective"]) if row is not None else objectives.RL


def sentence(e: Event, who: str, total_rounds: int, objective: str = objectives.RL, name: str = "") -> str:
    """`name`: the run's name as the directory holds it (after an edit, the new one)."""
    data = e.data
    kind = "trial" if "settings" in data and data["settings"].is_trial else "run"
    if objective != objectives.RL and (words := _tuning_sentence(e, who, objective)) is not None:
        return words
    match e.type.removeprefix("Run."):
        # a run's rounds first: most of the log (the cases are tried in order)
        case "RoundScored" if data["result"]["round_number"] == 0:
            return f"Round 0 scored the starting adapter: validation reward {data['result']['validation_reward']:.4f}."
        case "RoundScored":
            result = data["result"]
            return (
                f"Round {result['round_number']} of {total_rounds} scored: reward {result['reward']:.4f}, "
                f"validation reward {result['validation_reward']:.4f} (best round {data['best_round']})."
            )
        case "Saved" if data.get("retry_of"):
            return f"{who} retried run {str(data['retry_of'])[:8]}: a new run with the same settings."
        case "Saved" if data.get("duplicate_of"):
            return (
                f"{who} duplicated run {str(data['duplicate_of'])[:8]} as the new draft "
                f"“{data['settings'].name or 'Untitled'}”."
            )
        case "Saved":
            return f"{who} saved the {kind} draft “{data['settings'].name or 'Untitled'}”."
        case "Edited" if data.get("changes"):
            return f"{who} edited the draft “{name or 'Untitled'}”: {', '.join(data['changes'])}."
        case "Edited":
            return f"{who} edited the draft “{name or 'Untitled'}”."
        case "Deleted":
            return f"{who} deleted the draft “{name or 'Untitled'}”: it left the Runs list; its history stays here."
        case "Launched":
            return f"{who} launched the run."
        case "Queued":
            return f"{who} put the run on its provider's queue."
        case "Preparing" if data.get("resuming_from") is not None:
            return resumed_on_worker_sentence(who, data["resuming_from"], unit_of(objective))
        case "Preparing":
            return f"{who} started preparing the run: GPU, model and data."
        case "Stopped":
            line = messages.stopped_line(data["reason"], data["after_round"], total_rounds, data["best_round"])
            return f"{line}. {data['note']}".strip()
        case "SavingAdapter":
            return f"{who} finished training and is saving the adapter."
        case "AdapterReady":
            line = (
                f"The adapter of round {data['best_round']} is ready: {data['size_bytes']:,} bytes, "
                f"SHA-256 {data['sha256'][:12]}."
            )
            return f"{line} {data.get('note') or ''}".strip()  # the note says why, when the reconciler kept it
        case "Completed":
            return "The run completed."
        case "Failed":
            return f"The run failed: {data['message']}"
        case "Resumed":
            return resumed_sentence(data["worker"], data["after_round"], unit_of(objective))
        case "Continued":
            return continued_sentence(who, data["after_round"], data["changes"])
        case "Cancelled":
            return f"{who} cancelled the run."
        case "Retried":
            return f"{who} retried the run as run {str(data['new_run_id'])[:8]}."
        case "MergeRequested":
            unit = "round" if objective == objectives.RL else "step"
            return f"{who} asked for the adapter of {unit} {data['best_round']} to be merged into the base model."
        case "ModelMerged":
            count = len(data["files"])
            return (
                f"The merged model is written to {storage_key(data['location'])}: "
                f"{count} file{'' if count == 1 else 's'}, "
                f"{data['size_bytes']:,} bytes."
            )
        case "MergeFailed":
            return str(data["message"])
        case "TrialReported":
            finished = data["report"].get("finished")
            return "The trial reported its measures." if finished else "The trial reported that it did not finish."
        case "AlarmRaised":  # domain/runs/alarms.py
            return alarms.raised_sentence(data["title"], data["round"], data["seen"], data["advice"])
        case "AlarmCleared":
            return alarms.cleared_sentence(data["kind"], data["round"])
    return f"{who}: {e.type}."


def _tuning_sentence(e: Event, who: str, objective: str) -> str | None:
    """The sentences of SFT and DPO runs that differ from RL's: steps, not rounds; the last step's adapter."""
    data, name = e.data, objectives.OBJECTIVE_NAMES[objective]
    match e.type.removeprefix("Run."):
        case "Saved" if not data.get("retry_of") and not data.get("duplicate_of"):
            kind = "trial" if data["settings"].is_trial else "run"
            return f"{who} saved the {name} {kind} draft “{data['settings'].name or 'Untitled'}”."
        case "StepLogged":
            return messages.step_sentence(data["step"])
        case "Stopped":
            line = messages.stopped_steps_line(data["reason"], data["after_round"])
            return f"{line}. {data['note']}".strip()
        case "AdapterReady":
            return (
                f"The adapter of step {data['best_round']} is ready: {data['size_bytes']:,} bytes, "
                f"SHA-256 {data['sha256'][:12]}."
            )
    return None
