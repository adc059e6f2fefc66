-- cronwheel schema, version 3: the failure monitor looks, every round, for alarms an admin claimed
-- (alarm_status = -1) and never finished because it died. Nearly always there are none; without this
-- index the look was a full scan of job_log (400 ms a round at a few million rows, docs/performance.md).
CREATE INDEX job_log_alarm_claimed_idx ON job_log (id) WHERE alarm_status = -1;
