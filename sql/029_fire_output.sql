-- cronwheel schema, version 29: the fire output archive (docs/operations.md, "The fire output archive";
-- docs/architecture.md, "The life of one fire", step 6).
--
-- Until now a fire's output lived only on the executor that ran it: the console and `cronwheel logs tail`
-- asked that executor's /log, and an executor replaced or whose log_dir was lost took the output of every
-- fire it ran with it. Now the admin keeps each ended fire's job log:
--  * cronwheel-executor sends it with the fire's callback (the callback extension jobLog,
--    docs/xxl-job-protocol.md §3), and the callback's statement stores it (store/fire_log.hpp,
--    RecordHandleResults): no statement more per callback batch;
--  * for a callback without it (XXL-JOB's executors), the same statement queues the fire in fire_output_pull,
--    and the admin reads the executor's /log a moment later (results/output_puller.hpp), a few times if it
--    must, and stores what it read, or why it could not.
--
-- fire_output: one row per ended fire whose log was archived or could not be.
--   log_id, scheduled_ms: the fire (job_log's key). Partitioned as job_log, by UTC day of scheduled_ms
--                   (fire_output_pYYYYMMDD, created and dropped with job_log's days by store/log_partitions.hpp),
--                   so that retention (log_retention_days) drops a day of output whole, as it drops the day's
--                   fires, instead of deleting its rows one by one (and their TOAST chunks).
--   via:            'push' (sent with the callback) or 'pull' (read from the executor's /log)
--   archived_ms:    when it was stored
--   log_bytes:      the size of the whole log on the executor
--   left_out_bytes: bytes of it not stored: a log longer than the cap (output_archive_max_bytes, 1 MiB; and
--                   the executor's callback_log_max_bytes) keeps its head and tail around a marker line that
--                   says how many bytes were left out (cronwheel/head_tail.hpp)
--   content:        the log's text; NULL when it could not be pulled. Compressed with lz4 (PostgreSQL's TOAST
--                   compresses a value once its row passes about 2 KB; most fires' few hundred bytes stay
--                   as they are)
--   error:          why it could not be pulled ('' = it was archived)
CREATE TABLE fire_output (
    log_id         BIGINT NOT NULL,
    scheduled_ms   BIGINT NOT NULL,
    via            TEXT   NOT NULL CONSTRAINT fire_output_via_ck CHECK (via IN ('push', 'pull')),
    archived_ms    BIGINT NOT NULL,
    log_bytes      BIGINT NOT NULL DEFAULT 0,
    left_out_bytes BIGINT NOT NULL DEFAULT 0,
    content        TEXT   COMPRESSION lz4,
    error          TEXT   NOT NULL DEFAULT '',
    PRIMARY KEY (log_id, scheduled_ms)
) PARTITION BY RANGE (scheduled_ms);
CREATE TABLE fire_output_default PARTITION OF fire_output DEFAULT;

-- Fires whose log the admin is to read from their executor's /log: written by the callback's statement,
-- claimed by an admin's output puller when due (due_ms moves on while it pulls, so a puller that dies leaves
-- it to another), deleted when its fire_output row is written. attempts: pulls tried; last_error: why the
-- last one failed.
CREATE TABLE fire_output_pull (
    log_id       BIGINT  PRIMARY KEY,
    scheduled_ms BIGINT  NOT NULL,
    due_ms       BIGINT  NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX fire_output_pull_due_idx ON fire_output_pull (due_ms);
