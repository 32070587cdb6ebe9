"""Dramatiq actors between the event store and the trainer: launch a run or a trial, cancel, evaluate, merge, step a
loop or an experiment, reconcile; and the dispatcher that sends their messages as the event log records them.

`verity serve` calls `jobs.service.start(settings, verity, read_models)` beside the console, which only records
commands; `verity worker` calls `jobs.worker.run_worker(settings, queues)`.
"""
