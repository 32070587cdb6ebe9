"""Dramatiq actors between the event store and the trainer: launch a run or a trial, cancel, reconcile.

The app calls `jobs.service.start(settings, verity, read_models)` and passes `handle.launch` as its launcher;
`verity worker` calls `jobs.worker.run_worker(settings, queues)`.
"""
