-- RL Epochs: a round's share of answer tokens the clipped ratio held back (in the passes after the first; none
-- with one pass) and its gradient's norm before clipping. Rounds recorded before have none until
-- `verity projections rebuild` (their events hold none either before Epochs existed).
ALTER TABLE rounds ADD COLUMN clipped DOUBLE PRECISION;
ALTER TABLE rounds ADD COLUMN grad_norm DOUBLE PRECISION;
