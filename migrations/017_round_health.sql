-- The reward's health per round: the answers that failed the metric by kind, as JSON (e.g. {"timeout": 8,
-- "execution": 2}; none when no answer failed), and, for a custom metric, the sandbox batches that graded the
-- round's answers: how many in all, and the failed ones by the kind of their first failure, as JSON (none when
-- every batch scored). A built-in reward runs no sandbox: none of the three. Rounds recorded before have none until
-- `verity projections rebuild` (their events hold none either before this existed).
ALTER TABLE rounds ADD COLUMN failures_by_kind_json TEXT;
ALTER TABLE rounds ADD COLUMN sandbox_batches INTEGER;
ALTER TABLE rounds ADD COLUMN sandbox_failed_batches_json TEXT;
