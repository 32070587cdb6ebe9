-- Re-scorings (issue 22): one row a re-scoring of stored answers with another reward, its summary as JSON once
-- scored (the answers, old and new score, stay in the storage at summary_json's answers_key). Same conventions as
-- 001: TEXT ids and ISO times, JSON as TEXT.
CREATE TABLE rescorings (
    id TEXT PRIMARY KEY, org_id TEXT NOT NULL, project_id TEXT NOT NULL, name TEXT NOT NULL,
    source_kind TEXT NOT NULL, source_id TEXT NOT NULL, source_name TEXT NOT NULL, old_reward_label TEXT NOT NULL,
    reward_json TEXT NOT NULL, reward_label TEXT NOT NULL, rounds INTEGER NOT NULL, state TEXT NOT NULL,
    summary_json TEXT, moved_share DOUBLE PRECISION, failure TEXT, created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX rescorings_by_org ON rescorings (org_id, created_at);
CREATE INDEX rescorings_by_source ON rescorings (source_id, created_at);
