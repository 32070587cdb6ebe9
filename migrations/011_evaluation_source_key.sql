-- What an evaluation tested, as the Configure form's Baseline select filters it: "dataset_version:<id>" or
-- "benchmark:<name>". Rows written before have none until `verity projections rebuild`.
ALTER TABLE evaluations ADD COLUMN source_key TEXT;
