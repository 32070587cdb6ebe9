-- The reward's speed per round: grading seconds per graded answer, median and 95th percentile (none when no answer
-- was graded). Rounds recorded before have none, in their events too.
ALTER TABLE rounds ADD COLUMN grading_seconds_median DOUBLE PRECISION;
ALTER TABLE rounds ADD COLUMN grading_seconds_p95 DOUBLE PRECISION;
