"""How run settings are stored in events: as the API body (`RunSettings.to_api()`), marked as run settings by
the event store's JSON transcoder, and read back typed.

Events written before the settings were typed hold the same body without the mark (class version 1): their
classes (Run.Saved, Run.Edited, TrainingLoop.Created, Experiment.Created) upcast it with `upcast_settings`.
"""

from __future__ import annotations

from typing import Any

from eventsourcing.persistence import Transcoding

from domain.runs.run_settings import RunSettings


class RunSettingsAsBody(Transcoding):
    type = RunSettings
    name = "run_settings"

    def encode(self, obj: RunSettings) -> dict[str, Any]:
        return obj.to_api()

    def decode(self, data: dict[str, Any]) -> RunSettings:
        return RunSettings.from_saved(data)


def upcast_settings(state: dict[str, Any], key: str) -> None:
    """A version 1 event's settings (the API body as a plain dict, or None) as RunSettings."""
    if state.get(key) is not None:
        state[key] = RunSettings.from_saved(state[key])
