"""The types handlers ask for. The read models are a Protocol, which Litestar can't check with isinstance, so their
dependencies skip validation (the factory gives them)."""

from __future__ import annotations

from typing import Annotated, Any

from litestar.params import Dependency

from app.shell.commands import OwnWrites
from projections.store import ReadModels

ReadModelsDep = Annotated[ReadModels, Dependency(skip_validation=True)]
OwnWritesDep = Annotated[OwnWrites, Dependency(skip_validation=True)]
# verity.storage.FileStorage, or None when the app was built without storage (a small test app)
StorageDep = Annotated[Any, Dependency(skip_validation=True)]
