-- cronwheel schema, version 21: single sign-on (docs/operations.md, "Single sign-on";
-- admin/auth/sso_service.hpp). A user now says where it signs in:
--   login_source      'local' (a password kept here), 'ldap' (a bind to the directory), or 'oidc:<name>'
--                     (the OpenID provider <name> of the SSO file);
--   external_subject  who the source says it is: the ID token's `sub` for OpenID Connect, the entry's DN for
--                     LDAP; NULL for a local user.
-- A user of a single sign-on source has no password here: password_hash holds '!', which no password matches.
-- Its role and group roles are set from the source's groups at each login (the SSO file's role rules).
-- Usernames may now be e-mail addresses (Azure AD's and Google's users are named so): '@' and '+' are
-- allowed, up to 100 characters.
ALTER TABLE app_user DROP CONSTRAINT app_user_username_ck;
ALTER TABLE app_user ADD CONSTRAINT app_user_username_ck CHECK (username ~ '^[A-Za-z0-9._@+-]{3,100}$');
ALTER TABLE app_user DROP CONSTRAINT app_user_password_ck;
ALTER TABLE app_user ADD CONSTRAINT app_user_password_ck CHECK (password_hash LIKE '$argon2id$%' OR password_hash = '!');
ALTER TABLE app_user ADD COLUMN login_source TEXT NOT NULL DEFAULT 'local'
    CONSTRAINT app_user_login_source_ck CHECK (login_source = 'local' OR login_source = 'ldap' OR login_source ~ '^oidc:[a-z0-9_-]{1,32}$');
ALTER TABLE app_user ADD COLUMN external_subject TEXT
    CONSTRAINT app_user_external_subject_ck CHECK ((login_source = 'local') = (external_subject IS NULL));
ALTER TABLE app_user ADD CONSTRAINT app_user_external_uq UNIQUE (login_source, external_subject);

-- A sign-in through an OpenID provider, begun and not yet finished: the browser went to the provider with
-- `state`, and comes back with it and a code. Only the SHA-256 of the state and of the browser's binding
-- cookie are kept; the nonce and the PKCE verifier (RFC 7636) are kept as they are, for the ID token check
-- and the code's redemption, and the row is taken once, within ten minutes, by any admin of the cluster.
CREATE TABLE oidc_login (
    state_hash    TEXT    PRIMARY KEY,
    provider      TEXT    NOT NULL,
    browser_hash  TEXT    NOT NULL,
    nonce         TEXT    NOT NULL,
    code_verifier TEXT    NOT NULL,
    return_to     TEXT    NOT NULL DEFAULT '',
    created_ms    BIGINT  NOT NULL,
    expires_ms    BIGINT  NOT NULL
);
CREATE INDEX oidc_login_expires_idx ON oidc_login (expires_ms);

-- The cluster's sign-in policy, one row. require_sso: only a global ADMIN with a local account (the first
-- admin, break-glass) may sign in with a password kept here; everyone else signs in through single sign-on.
CREATE TABLE auth_policy (
    id          INTEGER PRIMARY KEY DEFAULT 1 CONSTRAINT auth_policy_one_row_ck CHECK (id = 1),
    require_sso BOOLEAN NOT NULL DEFAULT FALSE,
    updated_by  TEXT    NOT NULL DEFAULT '',
    updated_ms  BIGINT  NOT NULL DEFAULT 0
);
INSERT INTO auth_policy (id) VALUES (1);
