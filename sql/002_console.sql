-- cronwheel schema, version 2: indexes for the console's queries.
-- The audit page filters by entity (and id) newest first; sessions and tokens are looked up by user when
-- a password changes or a user is deleted.
CREATE INDEX audit_log_entity_idx ON audit_log (entity, entity_id, at_ms DESC);
CREATE INDEX user_session_user_idx ON user_session (user_id);
CREATE INDEX api_token_user_idx ON api_token (user_id);
