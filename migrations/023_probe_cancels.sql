-- Cancel a probe (issue 22): who cancelled it, as the Probe.Cancelled event names them (its actor's name); none
-- for a probe that was not cancelled.
ALTER TABLE probes ADD COLUMN cancelled_by TEXT;
