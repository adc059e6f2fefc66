-- cronwheel schema, version 8: when the executor started each fire (docs/xxl-job-protocol.md, "handleStartTime").
--
-- start_ms: epoch ms at which the executor started the fire's handler, on the executor's clock, as its callback
-- reported it (cronwheel-executor sends it; XXL-JOB executors do not); 0 = not reported. With scheduled_ms it
-- gives the start lag (exported as cronwheel_fire_start_lag_seconds), with trigger_ms the time the fire waited
-- in the executor's queue. Adding a column with a constant default writes no row.
ALTER TABLE job_log ADD COLUMN start_ms BIGINT NOT NULL DEFAULT 0;
