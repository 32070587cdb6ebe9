-- The read models of the spine: organizations, projects, runs, run detail, rounds, samples, timeline, feed.
-- The same file serves SQLite and PostgreSQL: TEXT ids and ISO times, INTEGER 0/1 for booleans, JSON as TEXT.

-- How far each projection has applied the event log, written in the same transaction as its rows.
CREATE TABLE projection_positions (name TEXT PRIMARY KEY, log_position BIGINT NOT NULL);

-- Which organization each aggregate belongs to, for the projections of events that don't repeat it.
CREATE TABLE directory (
    aggregate_id TEXT PRIMARY KEY, org_id TEXT NOT NULL, kind TEXT NOT NULL, name TEXT, total_rounds INTEGER
);

CREATE TABLE organizations (id TEXT PRIMARY KEY, name TEXT NOT NULL, plan TEXT NOT NULL, created_at TEXT NOT NULL);

CREATE TABLE projects (
    id TEXT PRIMARY KEY, org_id TEXT NOT NULL, name TEXT NOT NULL, model TEXT NOT NULL, revision TEXT,
    vision INTEGER NOT NULL, created_at TEXT NOT NULL
);
CREATE INDEX projects_by_org ON projects (org_id, name);

CREATE TABLE runs (
    id TEXT PRIMARY KEY, org_id TEXT NOT NULL, project_id TEXT NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,
    state TEXT NOT NULL, status_line TEXT NOT NULL, rounds_total INTEGER NOT NULL, rounds_scored INTEGER NOT NULL,
    best_round INTEGER, best_validation DOUBLE PRECISION, reward_label TEXT NOT NULL, created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL, created_position BIGINT NOT NULL
);
CREATE INDEX runs_by_org ON runs (org_id, created_position);

CREATE TABLE run_details (
    id TEXT PRIMARY KEY, org_id TEXT NOT NULL, project_id TEXT NOT NULL, model TEXT NOT NULL, name TEXT NOT NULL,
    kind TEXT NOT NULL, state TEXT NOT NULL, status_line TEXT NOT NULL, settings_json TEXT NOT NULL,
    reward_label TEXT NOT NULL, start_run TEXT, rounds_total INTEGER NOT NULL, rounds_scored INTEGER NOT NULL,
    best_round INTEGER, best_validation DOUBLE PRECISION, adapter_json TEXT, stop_json TEXT, failure TEXT,
    trial_report_json TEXT, retry_of TEXT, retried_as TEXT, duplicate_of TEXT, duplicates_json TEXT NOT NULL,
    launched_at TEXT, ended_at TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);

CREATE TABLE rounds (
    run_id TEXT NOT NULL, round_number INTEGER NOT NULL, org_id TEXT NOT NULL, rounds_total INTEGER NOT NULL,
    reward DOUBLE PRECISION, signal DOUBLE PRECISION, cut_off DOUBLE PRECISION, metric_failures INTEGER NOT NULL,
    updated INTEGER NOT NULL, loss DOUBLE PRECISION, validation_reward DOUBLE PRECISION NOT NULL,
    best_round INTEGER NOT NULL, sampling_seconds DOUBLE PRECISION NOT NULL, grading_seconds DOUBLE PRECISION NOT NULL,
    update_seconds DOUBLE PRECISION NOT NULL, validation_seconds DOUBLE PRECISION NOT NULL,
    mean_answer_tokens DOUBLE PRECISION, token_entropy DOUBLE PRECISION, peak_memory_bytes BIGINT,
    log_line TEXT NOT NULL, scored_at TEXT NOT NULL,
    PRIMARY KEY (run_id, round_number)
);

-- The index of rollout files (round-001.jsonl ...) the trainer writes under runs/<run id>/rollouts/.
CREATE TABLE rollout_files (
    run_id TEXT NOT NULL, round_number INTEGER NOT NULL, org_id TEXT NOT NULL, path TEXT NOT NULL,
    written_at TEXT NOT NULL,
    PRIMARY KEY (run_id, round_number)
);

CREATE TABLE timeline (
    log_position BIGINT PRIMARY KEY, org_id TEXT NOT NULL, run_id TEXT NOT NULL, occurred_at TEXT NOT NULL,
    actor_kind TEXT NOT NULL, actor_id TEXT NOT NULL, actor_name TEXT NOT NULL, event_type TEXT NOT NULL,
    sentence TEXT NOT NULL
);
CREATE INDEX timeline_by_run ON timeline (run_id, log_position);

CREATE TABLE feed (
    log_position BIGINT PRIMARY KEY, org_id TEXT NOT NULL, event_type TEXT NOT NULL, occurred_at TEXT NOT NULL,
    aggregate_id TEXT NOT NULL, aggregate_version INTEGER NOT NULL, actor_json TEXT NOT NULL, data_json TEXT NOT NULL
);
CREATE INDEX feed_by_org ON feed (org_id, log_position);
