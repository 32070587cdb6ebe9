"""Where a run's files are, as readers are told: the key under the storage root, never the server's own path.

The trainer and the merge job report a location as they wrote it: a path in the worker's storage folder
(/srv/verity/data/storage/runs/<run id>/adapter) or an s3:// URL with the bucket and its prefix. The events keep it
(the jobs read the files back from there, and old events must replay as they are); the feed, the API, the pages
and the messages show the key it has in the storage, runs/<run id>/adapter, whichever folder or bucket holds it.
"""

from __future__ import annotations

import re

TOP_FOLDERS = ("runs", "datasets")  # what the storage root holds: runs/<run id>/..., datasets/<version id>/...
# The last `runs/` or `datasets/` that starts a part of the location: a data folder that happens to be under a
# folder named runs (/home/runs/verity/data/storage/runs/<id>) still gives the storage's own key.
_KEY = re.compile(rf"^(?:.*/)?((?:{'|'.join(TOP_FOLDERS)})/[^/].*)$", re.DOTALL)


def storage_key(location: str) -> str:
    """The key of a location in its storage, whatever the storage's root.

    >>> storage_key("/srv/verity/data/storage/runs/3f2a/adapter")
    'runs/3f2a/adapter'
    >>> storage_key("s3://team-bucket/verity/runs/3f2a/merged/")
    'runs/3f2a/merged/'
    >>> storage_key("runs/3f2a/adapter")
    'runs/3f2a/adapter'
    """
    found = _KEY.match(location)
    if found is not None:
        return found.group(1)
    if location.startswith("/") or "://" in location:  # somewhere outside the storage's layout: its name alone
        return location.rstrip("/").rsplit("/", 1)[-1]
    return location


def rollout_key(run_id: object, round_number: int) -> str:
    """The key of a round's rollout file, as readers find it (the trainer writes it: trainer/rollouts.py).

    >>> rollout_key("r1", 3)
    'runs/r1/rollouts/round-003.jsonl'
    """
    return f"runs/{run_id}/rollouts/round-{round_number:03d}.jsonl"
