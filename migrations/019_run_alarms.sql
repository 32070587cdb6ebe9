-- A run's alarms standing (issue 21; domain/runs/alarms.py): Run.AlarmRaised adds one, Run.AlarmCleared takes it
-- away, as JSON, e.g. [{"kind": "no_signal", "title": "No learning signal", "round": 5, "seen": "...",
-- "advice": "...", "at": "..."}]; none (read as no alarm) for runs recorded before, whose events hold none.
ALTER TABLE run_details ADD COLUMN alarms_json TEXT;
