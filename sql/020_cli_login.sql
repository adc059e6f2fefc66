-- cronwheel schema, version 20: logins of the command-line client through the console (docs/cli.md,
-- "Logging in"; admin/auth/accounts.hpp, Accounts::ApproveCliLogin). `cronwheel login` listens on a
-- loopback port and opens the console; the user approves there, and the browser carries a one-time code back
-- to the client, which trades it, with the verifier only it knows, for an API token (OAuth 2.0 for native
-- apps, RFC 8252, with PKCE S256, RFC 7636). A row is one approved login not yet traded: only the code's
-- SHA-256 is kept, it is good once, for two minutes, and any admin of the cluster may take it.
CREATE TABLE cli_login (
    code_hash      TEXT    PRIMARY KEY,
    user_id        INTEGER NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    code_challenge TEXT    NOT NULL,  -- BASE64URL(SHA-256(code_verifier)), 43 characters
    token_name     TEXT    NOT NULL,
    token_scope    TEXT    NOT NULL
        CONSTRAINT cli_login_scope_ck CHECK (token_scope IN ('read', 'operate', 'write', 'admin')),
    token_days     INTEGER NOT NULL,
    created_ms     BIGINT  NOT NULL,
    expires_ms     BIGINT  NOT NULL
);
CREATE INDEX cli_login_expires_idx ON cli_login (expires_ms);
