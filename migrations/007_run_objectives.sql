-- The Runs list shows each run's Training objective (RL, SFT or DPO) and, for SFT and DPO, the steps logged of all.
ALTER TABLE runs ADD COLUMN objective TEXT NOT NULL DEFAULT 'rl';
ALTER TABLE runs ADD COLUMN steps_logged INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN steps_total INTEGER;
