-- cronwheel schema, version 7: API tokens expire, and are revoked when their user's password changes
-- (security review, issue 21; admin/include/admin/auth/accounts.hpp).
--
-- expires_ms: the token is refused from this instant on (epoch ms); a new token lasts expires_in_days (90 by
-- default, at most 365). A token made before this version had no expiry: it gets 90 days from the upgrade,
-- by the database's clock (a migration has no other), so that the scripts using it keep working while their
-- owners make new ones.
-- revoked_ms, revoked_reason: when and why the token was revoked: 'password_reset' (an admin set its user's
-- password), 'password_changed' (the user changed it); 0 and '' while it is not. A revoked token stays
-- listed, so its owner sees why it stopped working, until deleted. A deleted user's tokens go with the user
-- (ON DELETE CASCADE).
ALTER TABLE api_token
    ADD COLUMN expires_ms     BIGINT,
    ADD COLUMN revoked_ms     BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN revoked_reason TEXT   NOT NULL DEFAULT ''
        CONSTRAINT api_token_revoked_reason_ck CHECK (revoked_reason IN ('', 'password_reset', 'password_changed'));
UPDATE api_token SET expires_ms = (extract(epoch FROM now()) * 1000)::bigint + 90 * 86400000::bigint;
ALTER TABLE api_token
    ALTER COLUMN expires_ms SET NOT NULL,
    ADD CONSTRAINT api_token_expiry_ck CHECK (expires_ms > created_ms);
