-- The jobs' dispatcher (jobs/dispatcher.py): how far it followed the event log, one row. `sent_to`: the message of
-- every event up to it was sent once; `position`: where a restart resumes (the same in production; on the embedded
-- default, before the oldest message that its in-memory queue had not finished). Not a read model: a rebuild
-- neither empties nor refills it.
CREATE TABLE IF NOT EXISTS job_dispatch (
    name TEXT PRIMARY KEY,
    position BIGINT NOT NULL,
    sent_to BIGINT NOT NULL
);
INSERT INTO job_dispatch (name, position, sent_to) VALUES ('jobs', 0, 0);
