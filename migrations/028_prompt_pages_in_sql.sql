-- The Prompts tab reads only what it shows (app/runs/prompts.py): the counts by verdict, one page of the list in
-- its sort, and the cost's sums, each worked out by the database, rather than every history and every round's
-- cost of the run (4,000 histories read and sorted by a 1,000-round run's first viewer, 20 ms). A sort by a
-- prompt's mean score needs that mean as a column; the projection writes it with the history from now on.
ALTER TABLE prompt_histories ADD COLUMN mean_score DOUBLE PRECISION;
UPDATE prompt_histories SET mean_score = score_sum / draws;
-- The counts by verdict read this index alone, and the list's first page in its default sort (most drawn) is the
-- start of the other; the tab no longer reads the histories drawn since a round, so their index by last round goes.
CREATE INDEX prompt_histories_by_verdict ON prompt_histories (run_id, org_id, verdict);
CREATE INDEX prompt_histories_most_drawn ON prompt_histories (run_id, draws DESC, prompt_index);
DROP INDEX prompt_histories_by_last_round;
