-- A run's rollout files are read from its rounds (every round from 1 has one, written when it is scored), so the
-- table that indexed them, and its projection's position, go.
DROP TABLE rollout_files;
DELETE FROM projection_positions WHERE name = 'samples';
