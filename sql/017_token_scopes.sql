-- cronwheel schema, version 17: an API token's scope (admin/model/accounts.hpp, TokenScope; docs/operations.md,
-- "API tokens"): the most its routes may need, each scope including those before it:
--   read     every GET (and the POSTs that only compute, a schedule's preview);
--   operate  also trigger, start, stop, kill, run once; a workflow's trigger, kill and re-run;
--   write    also create, change and delete jobs and workflows, clear logs;
--   admin    also the account (its tokens, its password) and every route only an ADMIN may use (groups,
--            calendars, alert channels, drain, users, the audit log).
-- A token acts as its user within its scope. Tokens made before this version could do all their user
-- could: they keep that ('admin'). A new token is 'read' unless its request names a scope.
ALTER TABLE api_token
    ADD COLUMN scope TEXT NOT NULL DEFAULT 'admin'
        CONSTRAINT api_token_scope_ck CHECK (scope IN ('read', 'operate', 'write', 'admin'));
ALTER TABLE api_token ALTER COLUMN scope SET DEFAULT 'read';
