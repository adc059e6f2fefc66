-- cronwheel schema, version 14: the child jobs of a broadcast fire run once, after all its shards
-- (docs/xxl-job-protocol.md §7, "Child jobs"; store/fire_log.cpp, InsertChildren).
--
-- broadcast_log_id: the id of the broadcast fire a shard belongs to (its shard 0, whose id it is), on every
-- shard written by CreateShards and on the retries of a shard; 0 for a fire that is not a shard of a
-- broadcast. The shards of one broadcast share it, so the callback of the last one to succeed sees that all
-- have and fires the child jobs once.
ALTER TABLE job_log ADD COLUMN broadcast_log_id BIGINT NOT NULL DEFAULT 0;
