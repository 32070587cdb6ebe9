"""The storage the datasets part reads and writes; a Protocol, so its dependency skips validation."""

from __future__ import annotations

from typing import Annotated

from litestar.params import Dependency

from verity.storage import FileStorage

StorageDep = Annotated[FileStorage, Dependency(skip_validation=True)]
