-- Merge model, as events on the run: merge_state is merging | merged | failed (none before a merge is asked for),
-- merge_json what the page shows (the best round, where the checkpoint is, or why it failed). The reconciler asks
-- for the merges under way at start-up. Rows written before have none until `verity projections rebuild`.
ALTER TABLE run_details ADD COLUMN merge_state TEXT;
ALTER TABLE run_details ADD COLUMN merge_json TEXT;
CREATE INDEX run_details_by_merge_state ON run_details (merge_state);
