-- A round's log line is written when the round is read (projections/run_reads.py), from the row's own columns:
-- catch-up no longer formats and stores ~200 bytes of text for every round of the log. The one fact the line needs
-- that the row lacked, the update's passes (Epochs), gets a column, and the rounds projection reads the log again
-- from its start to fill it.
ALTER TABLE rounds ADD COLUMN passes INTEGER;
ALTER TABLE rounds DROP COLUMN log_line;
DELETE FROM projection_positions WHERE name = 'rounds';
