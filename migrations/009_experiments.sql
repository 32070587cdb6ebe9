-- The read model of experiments (measure the base model, train with RL, compare on the same test examples).
-- Same conventions as 001: TEXT ids and ISO times, INTEGER 0/1 for booleans.

CREATE TABLE experiments (
    id TEXT PRIMARY KEY, org_id TEXT NOT NULL, project_id TEXT NOT NULL, name TEXT NOT NULL,
    source_label TEXT NOT NULL, metric_label TEXT NOT NULL, reward_line TEXT NOT NULL, trains INTEGER NOT NULL,
    state TEXT NOT NULL, baseline_id TEXT, run_id TEXT, evaluation_id TEXT, training_ended TEXT,
    base_score DOUBLE PRECISION, adapter_score DOUBLE PRECISION, failure TEXT, created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX experiments_by_org ON experiments (org_id, created_at);
