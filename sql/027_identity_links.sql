-- cronwheel schema, version 27: a single sign-on user is linked to its identity, the pair (login_source,
-- external_subject), and to nothing else (security review 2, finding N2; docs/operations.md, "Single
-- sign-on", and docs/security.md). Before this version a first sign-in whose user name was a user's of the
-- same source signed in as that user and re-linked it to the new subject; now it is refused, and an ADMIN
-- links an identity to an existing user explicitly (PUT /api/v1/users/{id}/identity).
--
-- Existing rows keep the link they have: each external user stays linked to the subject stored with it,
-- which is the subject of the last person who signed in as it. Because earlier versions re-linked a user by
-- its name, that may have been another identity of the same provider (one whose user-name claim was made
-- equal to it); docs/operations.md ("Upgrading to version 27") says how to review them. Nothing here can
-- tell the two apart, so no row is changed.
--
-- When an ADMIN changes or removes a user's link, the user's sessions end and its API tokens are revoked
-- with the reason 'identity_changed' (they were made by whoever held the old identity).
ALTER TABLE api_token DROP CONSTRAINT api_token_revoked_reason_ck;
ALTER TABLE api_token ADD CONSTRAINT api_token_revoked_reason_ck
    CHECK (revoked_reason IN ('', 'password_reset', 'password_changed', 'identity_changed'));
