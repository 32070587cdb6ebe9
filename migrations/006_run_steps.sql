-- SFT and DPO runs log optimizer steps instead of rounds: the run page charts their loss and lists them.
CREATE TABLE run_steps (
    run_id TEXT NOT NULL, step INTEGER NOT NULL, org_id TEXT NOT NULL, steps INTEGER NOT NULL,
    epoch DOUBLE PRECISION NOT NULL, loss DOUBLE PRECISION NOT NULL, validation_loss DOUBLE PRECISION,
    seconds DOUBLE PRECISION NOT NULL, logged_at TEXT NOT NULL,
    PRIMARY KEY (run_id, step)
);
