-- cronwheel schema, version 25: a job's place in its schedule moves from job to job_schedule, a narrow table
-- of its own (docs/architecture.md, "The tables of fires").
--
-- Every scan that writes a job's fires advances its next_fire_ms: thousands of rows a second. In job that
-- update rewrote the whole row (about 275 bytes with its glue source, description and arrays) and, as
-- next_fire_ms is indexed, inserted into each of job's indexes (the key, group, tags and due indexes): about
-- 735 bytes of WAL and 20-38 us per job advanced, measured in psql on 5,000 jobs. In job_schedule, whose row
-- is 36 bytes with two indexes, the same update writes 220-280 bytes in 18-22 us (docs/performance.md, "A
-- narrow table for the schedule").
--
-- Rules, kept by the admin (store/job_table.cpp, store/job_repository.cpp):
--  * every job has exactly one job_schedule row, written with the job and deleted with it (ON DELETE CASCADE);
--  * next_fire_ms is 0 while the job is stopped (enabled false), so the due index holds only started jobs;
--    kAwaitingCompletion (the largest bigint) marks a FIX_DELAY job waiting for its fire to finish;
--  * job.enabled and job.stop_reason stay in job: what a user changes and what the job cache listens for.
--    The scan reads job.enabled too, so a job stopped by a statement that wrote only job is not fired;
--  * an edit, start or stop locks job_schedule's row before job's, the order a scan takes them in.
CREATE TABLE job_schedule (
    job_id       INTEGER PRIMARY KEY REFERENCES job (id) ON DELETE CASCADE,
    next_fire_ms BIGINT  NOT NULL DEFAULT 0,            -- 0: stopped
    last_fire_ms BIGINT  NOT NULL DEFAULT 0             -- the last instant written, 0: none since started
) WITH (fillfactor = 50);
INSERT INTO job_schedule (job_id, next_fire_ms, last_fire_ms)
SELECT id, CASE WHEN enabled THEN next_fire_ms ELSE 0 END, last_fire_ms FROM job;
-- The pre-read: started jobs by next fire.
CREATE INDEX job_schedule_due_idx ON job_schedule (next_fire_ms) WHERE next_fire_ms > 0;

DROP INDEX job_due_idx;
ALTER TABLE job DROP COLUMN next_fire_ms, DROP COLUMN last_fire_ms;
