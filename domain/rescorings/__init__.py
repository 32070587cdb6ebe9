"""Re-scorings: a finished run's stored answers (or a scored probe's) scored again with another reward, answer by
answer, without sampling anything again; the stored answers stay as they were."""
