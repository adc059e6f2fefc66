-- cronwheel schema, version 13: how many fires of a job may run at once across the cluster
-- (docs/operations.md, "Concurrency across the cluster"; admin/model/model.hpp, ConcurrencyPolicy).
--
-- concurrency_policy: ALLOW  any number at once (XXL-JOB's behaviour), or at most max_concurrent when it is
--                            above 0;
--                     FORBID no new fire while one of the job is claimed for sending, being sent or running
--                            on any executor.
-- max_concurrent:     0 = no limit; under FORBID only 0 or 1 (the admin's validation says so).
-- The admin enforces the limit when it claims a fire for sending (store/fire_log.cpp, ClaimForDispatch): it
-- counts the job's open fires (fire_open) under a transaction-level advisory lock per job, so two admins
-- claiming fires of the same job agree. A fire over the limit is recorded SKIPPED, and its trigger_msg names
-- the fire still running. An executor's block strategy still applies inside that executor.
ALTER TABLE job
    ADD COLUMN concurrency_policy TEXT    NOT NULL DEFAULT 'ALLOW' CHECK (concurrency_policy IN ('ALLOW', 'FORBID')),
    ADD COLUMN max_concurrent     INTEGER NOT NULL DEFAULT 0 CHECK (max_concurrent BETWEEN 0 AND 1000);
