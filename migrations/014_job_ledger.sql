-- The jobs' ledger (jobs/ledger.py): which runs were put on a queue and which worker holds each (its heartbeat),
-- and which workers serve which queue. Not a read model: a rebuild neither empties nor refills it. The ledger
-- made these tables itself before this migration, hence IF NOT EXISTS: a database that has them keeps them.
CREATE TABLE IF NOT EXISTS job_runs (
    run_id TEXT PRIMARY KEY,
    queue TEXT NOT NULL,
    enqueued_at DOUBLE PRECISION,
    worker_id TEXT,
    host TEXT,
    pid INTEGER,
    claimed_at DOUBLE PRECISION,
    beat_at DOUBLE PRECISION
);
CREATE TABLE IF NOT EXISTS job_workers (
    worker_id TEXT PRIMARY KEY,
    queues TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    gpu TEXT NOT NULL,
    price_per_hour DOUBLE PRECISION,
    started_at DOUBLE PRECISION NOT NULL,
    beat_at DOUBLE PRECISION NOT NULL
);
