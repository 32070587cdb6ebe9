-- The jobs' ledger holds the claims of evaluations, reward probes and re-scorings beside the runs' (jobs/ledger.py,
-- jobs/work_claims.py), so the reconciler can end one whose worker died (jobs/orphan_work.py). Every row before
-- this migration is a run's.
ALTER TABLE job_runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'run';
