-- The Prompts tab of a live run reads, for each new state, the histories drawn since its previous state (the rows
-- whose last_round is above the highest it read): without an index, every history of the run was scanned.
CREATE INDEX prompt_histories_by_last_round ON prompt_histories (run_id, last_round);
