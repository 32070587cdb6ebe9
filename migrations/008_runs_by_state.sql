-- The reconciler asks every few seconds for the runs a worker holds or should hold, by state.
CREATE INDEX runs_by_state ON runs (state);
