-- cronwheel schema, version 6: a partial index of the jobs that have child jobs.
--
-- Every callback batch asks whether any of its fires' jobs has child jobs before it inserts the children's
-- fires (admin/src/store/fire_log.cpp, InsertChildren): SELECT EXISTS (... WHERE id = ANY(...) AND
-- cardinality(child_job_ids) > 0). Without this index that look-up reads one job row per fire through the
-- primary key (about 6 µs per fire at N = 5,000 in docs/performance.md); few jobs have child jobs, so this
-- index is small (empty when none has) and the look-up reads only it.
CREATE INDEX IF NOT EXISTS job_with_children_idx ON job (id) WHERE cardinality(child_job_ids) > 0;
