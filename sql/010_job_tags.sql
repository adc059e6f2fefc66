-- cronwheel schema, version 10: tags on jobs (docs/operations.md, "Tags").
--
-- A tag is a short lower-case label a team puts on its jobs ("team:payments", "nightly") to find, filter and
-- act on them together. The admin checks and lower-cases them before it stores them (model/validation.hpp:
-- 1 to 40 characters, at most 20 per job, no duplicates), so the column holds only valid tags.
-- tags: in the order the user gave them
ALTER TABLE job ADD COLUMN tags TEXT[] NOT NULL DEFAULT '{}';
-- The list filter `tags @> ARRAY[...]` (jobs having all the given tags) and the tag list read it.
CREATE INDEX job_tags_idx ON job USING gin (tags);
