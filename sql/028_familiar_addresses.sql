-- cronwheel schema, version 28: the login throttle's familiar addresses, kept in the database (security
-- review 2, finding F5 (b); admin/auth/login_throttle.hpp, admin/store/pg_familiar_addresses.hpp). An
-- address is familiar for a user who signed in successfully from it in the last 30 days: a login from there
-- is held to a throttle key of its own, so guesses from elsewhere do not lock the user out of it. Earlier
-- versions kept these in each admin's memory, so a restart (or another admin of the cluster) forgot them.
--
-- An IP address is personal data: only a keyed BLAKE2b-256 hash of it is stored (hex), keyed by a key the
-- admins derive from the cluster's access_token, which is not in the database. At most 8 rows per user (the
-- most recent sign-ins), and rows older than 30 days are deleted at each sign-in; a user's rows go with it.
CREATE TABLE login_familiar_address (
    user_id      INTEGER NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    address_hash TEXT    NOT NULL,
    last_ms      BIGINT  NOT NULL,
    PRIMARY KEY (user_id, address_hash)
);
CREATE INDEX login_familiar_address_last_idx ON login_familiar_address (last_ms);
