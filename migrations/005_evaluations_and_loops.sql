-- The read models of evaluations (with their per-example results) and training loops (with their rounds).
-- Same conventions as 001: TEXT ids and ISO times, INTEGER 0/1 for booleans, JSON as TEXT.

CREATE TABLE evaluations (
    id TEXT PRIMARY KEY, org_id TEXT NOT NULL, project_id TEXT NOT NULL, name TEXT NOT NULL, model TEXT NOT NULL,
    source_label TEXT NOT NULL, scoring_json TEXT NOT NULL, main_metric TEXT NOT NULL, metric_label TEXT NOT NULL,
    adapter_run TEXT, baseline_id TEXT, state TEXT NOT NULL, score DOUBLE PRECISION, breakdown_json TEXT,
    failure TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE INDEX evaluations_by_org ON evaluations (org_id, created_at);

CREATE TABLE evaluation_results (
    evaluation_id TEXT NOT NULL, example_index INTEGER NOT NULL, org_id TEXT NOT NULL, prompt TEXT NOT NULL,
    reference TEXT NOT NULL, answer TEXT NOT NULL, score DOUBLE PRECISION NOT NULL, cut_off INTEGER NOT NULL,
    PRIMARY KEY (evaluation_id, example_index)
);

CREATE TABLE loops (
    id TEXT PRIMARY KEY, org_id TEXT NOT NULL, project_id TEXT NOT NULL, name TEXT NOT NULL, benchmark TEXT NOT NULL,
    score_column TEXT NOT NULL, target DOUBLE PRECISION NOT NULL, max_rounds INTEGER NOT NULL,
    give_up_after INTEGER NOT NULL, reclaim_storage INTEGER NOT NULL, state TEXT NOT NULL, failure TEXT,
    best_round INTEGER, rounds_run INTEGER NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE INDEX loops_by_org ON loops (org_id, created_at);

CREATE TABLE loop_rounds (
    loop_id TEXT NOT NULL, round_number INTEGER NOT NULL, org_id TEXT NOT NULL, run_id TEXT NOT NULL,
    evaluation_id TEXT, score DOUBLE PRECISION, started_at TEXT NOT NULL, ended_at TEXT,
    PRIMARY KEY (loop_id, round_number)
);
