-- cronwheel schema, version 23: ahead-of-time dispatch (docs/architecture.md, "Ahead-of-time dispatch").
-- A cronwheel-executor's heartbeat says that it starts a fire sent with runAtMs at that instant (run_at), and
-- carries its clock offset as it measured it against the admin's clock (ms, its clock minus the admin's,
-- NULL until measured) within +- clock_error_ms. XXL-JOB executors send none of it: run_at stays false and
-- their fires go at their instant, as before.
ALTER TABLE executor_registry
    ADD COLUMN run_at          BOOLEAN NOT NULL DEFAULT FALSE,
    ADD COLUMN clock_offset_ms BIGINT,
    ADD COLUMN clock_error_ms  BIGINT NOT NULL DEFAULT 0;
