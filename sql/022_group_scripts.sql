-- cronwheel schema, version 22: script jobs where a global ADMIN allows them (docs/operations.md, "Roles";
-- docs/security.md, "Script jobs"). A script job (any glue type but BEAN) runs code its author wrote on the
-- executors of its group. Until now only a global ADMIN could create or change one; a group's DEVELOPER may
-- now do so in a group whose allow_scripts a global ADMIN turned on (its executors must still run with
-- enable_scripts). Off for every group, as before.
ALTER TABLE job_group ADD COLUMN allow_scripts BOOLEAN NOT NULL DEFAULT FALSE;
