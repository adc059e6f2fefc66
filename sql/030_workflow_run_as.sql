-- cronwheel schema, version 30: whom a workflow's scheduled runs fire its nodes for (security review 2, N4;
-- admin/model/workflow_access.hpp; docs/operations.md, "Workflows").
--
-- workflow.run_as_user_id: the user who saved the workflow last. Saving needs the OPERATOR role in the group
--                          of every node's job; the scan checks the same of this user's roles as they are
--                          when it writes a scheduled run, and stops the workflow (stop_reason, and one FAILED
--                          run that is alarmed) when they no longer allow a node. NULL: no one (the user was
--                          deleted, or no save of it is known): a scheduled run is refused until someone who
--                          may saves the workflow again.
ALTER TABLE workflow ADD COLUMN run_as_user_id INTEGER REFERENCES app_user (id) ON DELETE SET NULL;

-- The workflows saved before this version: their last save's user, as the audit log recorded it.
UPDATE workflow w
   SET run_as_user_id = a.user_id
  FROM (SELECT DISTINCT ON (entity_id) entity_id, user_id
          FROM audit_log
         WHERE entity = 'workflow' AND action IN ('workflow.create', 'workflow.update') AND user_id IS NOT NULL
         ORDER BY entity_id, at_ms DESC, id DESC) a
 WHERE a.entity_id = w.id::text AND EXISTS (SELECT 1 FROM app_user u WHERE u.id = a.user_id);
