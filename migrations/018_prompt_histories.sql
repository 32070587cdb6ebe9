-- The run page's Prompts tab (projections/prompts.py), from each round's prompts (RoundResult.prompts): every
-- training prompt a run drew, each time it was drawn (prompt_rounds: its position in the round's rollout file, mean
-- score, share of answers that passed, whether its group taught anything, its answers' tokens and its share of the
-- round's sampling seconds), its history in one row (prompt_histories, with its verdict), and each round's cost of
-- groups that taught nothing (prompt_costs). Rounds recorded before have none: their events hold no prompts.
CREATE TABLE prompt_rounds (
    run_id TEXT NOT NULL, prompt_index INTEGER NOT NULL, round_number INTEGER NOT NULL, org_id TEXT NOT NULL,
    position INTEGER NOT NULL, mean_score DOUBLE PRECISION NOT NULL, pass_share DOUBLE PRECISION NOT NULL,
    taught INTEGER NOT NULL, tokens INTEGER NOT NULL, sampling_seconds DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, prompt_index, round_number)
);

CREATE TABLE prompt_histories (
    run_id TEXT NOT NULL, prompt_index INTEGER NOT NULL, org_id TEXT NOT NULL, verdict TEXT NOT NULL,
    draws INTEGER NOT NULL, passed_draws INTEGER NOT NULL, taught_draws INTEGER NOT NULL,
    first_passed INTEGER NOT NULL, last_passed INTEGER NOT NULL, first_round INTEGER NOT NULL,
    last_round INTEGER NOT NULL, score_sum DOUBLE PRECISION NOT NULL, pass_share_sum DOUBLE PRECISION NOT NULL,
    last_mean_score DOUBLE PRECISION NOT NULL, tokens BIGINT NOT NULL, dead_tokens BIGINT NOT NULL,
    sampling_seconds DOUBLE PRECISION NOT NULL, dead_seconds DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, prompt_index)
);

CREATE TABLE prompt_costs (
    run_id TEXT NOT NULL, round_number INTEGER NOT NULL, org_id TEXT NOT NULL, prompts INTEGER NOT NULL,
    dead_groups INTEGER NOT NULL, too_easy INTEGER NOT NULL, too_hard INTEGER NOT NULL,
    sampling_seconds DOUBLE PRECISION NOT NULL, dead_seconds DOUBLE PRECISION NOT NULL, tokens BIGINT NOT NULL,
    dead_tokens BIGINT NOT NULL,
    PRIMARY KEY (run_id, round_number)
);
