-- cronwheel schema, version 31: a stop that always stops (issue 48; docs/architecture.md, "Stops and changes
-- against the scan").
--
-- An admin claims each second's fires a moment before the second (dispatch_lead) and sends them at it. A stop,
-- a change of schedule or a delete of their job, or an edit of a calendar the job follows, that commits between
-- the claim and the instant used to leave those fires alone (they were claimed, so possibly on their way), and
-- they were sent although their instant came after the stop. Now such a transaction also closes the job's
-- claimed fires that no executor has accepted and whose instant is still to come (fire_log::WithdrawClaimed:
-- their fire_open and job_log rows are deleted, as an unclaimed fire's are) and names them here; the admin that
-- holds the claim reads this table at the instant, before it sends, and drops what it names.
--
-- fire_withdrawn: one row per claimed fire withdrawn before its instant.
--   log_id, scheduled_ms: the fire (its instant: the admin reads the rows of the instants it is sending)
--   job_id:               its job (a stop cancels the job's withdrawn fires at the executors that may hold
--                         them, sent ahead by another admin)
--   withdrawn_ms:         when (the withdrawing admin's clock); rows older than the fires' retention go with it
CREATE TABLE fire_withdrawn (
    log_id       BIGINT PRIMARY KEY,
    scheduled_ms BIGINT NOT NULL,
    job_id       INTEGER NOT NULL,
    withdrawn_ms BIGINT NOT NULL
);
CREATE INDEX fire_withdrawn_scheduled_idx ON fire_withdrawn (scheduled_ms);
