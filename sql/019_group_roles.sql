-- cronwheel schema, version 19: roles per executor group (admin/model/accounts.hpp, GroupRole;
-- docs/operations.md, "Roles"). A USER holds one role in each group it may work on, each role including
-- those before it:
--   VIEWER     read the group's jobs, workflows, fires and their outputs;
--   OPERATOR   also trigger, start, stop, kill, run once; a workflow's trigger, kill and re-run;
--   DEVELOPER  also create, change and delete jobs and workflows (script jobs only where the admin allows
--              them), clear logs;
--   ADMIN      also the group itself: its title and alert channels, and draining its executors.
-- A global ADMIN (app_user.role) holds every right in every group, and alone manages users, groups,
-- calendars and alert channels. Each role matches an API token scope (read, operate, write, admin): a
-- route's scope is the role it needs in the group it acts on.
--
-- The list app_user.permitted_group_ids becomes rows, one per (user, group): a group deleted takes its
-- rows with it. A USER of an earlier version could do everything in its groups but manage them: it
-- becomes their DEVELOPER.
CREATE TABLE app_user_group (
    user_id  INTEGER NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    group_id INTEGER NOT NULL REFERENCES job_group (id) ON DELETE CASCADE,
    role     TEXT    NOT NULL
        CONSTRAINT app_user_group_role_ck CHECK (role IN ('VIEWER', 'OPERATOR', 'DEVELOPER', 'ADMIN')),
    PRIMARY KEY (user_id, group_id)
);
CREATE INDEX app_user_group_group_idx ON app_user_group (group_id);

INSERT INTO app_user_group (user_id, group_id, role)
SELECT DISTINCT u.id, g.id, 'DEVELOPER'
  FROM app_user u
 CROSS JOIN LATERAL unnest(u.permitted_group_ids) AS p(group_id)
  JOIN job_group g ON g.id = p.group_id
 WHERE u.role = 'USER';

ALTER TABLE app_user DROP COLUMN permitted_group_ids;
