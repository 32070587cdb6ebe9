-- Reward probes (issue 22): one row a probe, its summary as JSON once scored (the answers stay in the storage, at
-- summary_json's answers_key). Same conventions as 001: TEXT ids and ISO times, JSON as TEXT.
CREATE TABLE probes (
    id TEXT PRIMARY KEY, org_id TEXT NOT NULL, project_id TEXT NOT NULL, name TEXT NOT NULL, model TEXT NOT NULL,
    source_label TEXT NOT NULL, source_json TEXT NOT NULL, reward_json TEXT NOT NULL, reward_label TEXT NOT NULL,
    adapter_run TEXT, prompts INTEGER NOT NULL, answers_per_prompt INTEGER NOT NULL,
    max_answer_tokens INTEGER NOT NULL, seed INTEGER NOT NULL, state TEXT NOT NULL, summary_json TEXT,
    varied_share DOUBLE PRECISION, failure TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE INDEX probes_by_org ON probes (org_id, created_at);
