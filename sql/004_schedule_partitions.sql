-- cronwheel schema, version 4: schedule partitions (admin/include/admin/schedule/partitions.hpp).
-- A job belongs to partition job.id % P, where P is the number of rows here. Each admin's scan locks the
-- partitions assigned to it (and any nobody scanned lately) with FOR UPDATE SKIP LOCKED, so admins scan in
-- parallel instead of queueing on job_lock's single 'schedule_lock' row, which no longer serialises scans.
-- The admin setting schedule_partitions resizes the table at start (under the migration lock).
CREATE TABLE schedule_partition (
    id          INTEGER PRIMARY KEY CONSTRAINT schedule_partition_id_ck CHECK (id >= 0),
    owner_node  TEXT,                       -- the admin that scanned it last (for operators)
    scanned_ms  BIGINT  NOT NULL DEFAULT 0  -- when it was last scanned; 0 = never
);
INSERT INTO schedule_partition (id) SELECT generate_series(0, 59);
