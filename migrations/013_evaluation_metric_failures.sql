-- A custom metric's failures in an evaluation: on the evaluation, metric_failures_json (how many graded answers
-- failed, of how many, and which batches failed with what error; none when the metric never failed); on each
-- result, the failure kind and the metric's error in words. Rows written before have none until
-- `verity projections rebuild`.
ALTER TABLE evaluations ADD COLUMN metric_failures_json TEXT;
ALTER TABLE evaluation_results ADD COLUMN failure TEXT;
ALTER TABLE evaluation_results ADD COLUMN metric_error TEXT;
