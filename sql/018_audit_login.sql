-- cronwheel schema, version 18: the audit log records how each caller signed in (Principal::Login in
-- admin/auth/authenticator.hpp): "session" (a console session), "token 7 (ci)" (an API token, by id and
-- name, so a scoped token's actions can be told apart), "password" (the login itself). '' for the entries
-- written before this version.
ALTER TABLE audit_log ADD COLUMN via TEXT NOT NULL DEFAULT '';
