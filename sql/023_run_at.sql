-- cronwheel schema, version 23: ahead-of-time dispatch (docs/architecture.md, "Ahead-of-time dispatch").
-- A cronwheel-executor's heartbeat says that it starts a fire sent with runAtMs at that instant (run_at), and
-- carries its clock, from which the admin records its offset (ms, the executor's clock minus the admin's,
-- NULL when it sent none). XXL-JOB executors send neither: run_at stays false and their fires go at their
-- instant, as before.
ALTER TABLE executor_registry
    ADD COLUMN run_at          BOOLEAN NOT NULL DEFAULT FALSE,
    ADD COLUMN clock_offset_ms BIGINT;
