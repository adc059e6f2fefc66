-- cronwheel schema, version 15: a fire's output, passed to its child jobs (docs/operations.md, "Passing a
-- result to child jobs").
--
-- output: the JSON value the handler returned with its result (cronwheel's callback extension field
--         `output`, at most 16 KiB as compact JSON); NULL when it returned none (every XXL-JOB executor). A
--         child job's parameter names it as {{parent.output}} or {{parent.output.path}}: the admin resolves
--         it when it writes the child's fire, so the executor receives the value in executorParams.
ALTER TABLE job_log ADD COLUMN output JSONB;
