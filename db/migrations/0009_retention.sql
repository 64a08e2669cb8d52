-- Retention: what the background pruner (and `brain prune`) looks rows up by. Without these,
-- every batch would scan whole tables, and deleting a server would scan sessions and host
-- connections for the foreign keys that point at it.

-- Ended sessions by age: the oldest batch first, never an active one.
CREATE INDEX sessions_ended_by_age ON sessions (ended_at) WHERE status = 'ended';
-- Idempotency keys are kept a day.
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
-- Closed host connections and stopped servers by age.
CREATE INDEX host_connections_closed_by_age ON host_connections (closed_at) WHERE closed_at IS NOT NULL;
CREATE INDEX servers_stopped_by_age ON servers (stopped_at) WHERE stopped_at IS NOT NULL;
-- The foreign keys to servers, for deleting one (the partial indexes cover only open rows).
CREATE INDEX host_connections_by_server ON host_connections (server_id);
CREATE INDEX sessions_by_owner_any ON sessions (owner_id);
-- Replicas by their connections (the cascade, and whether one was seen within the window).
CREATE INDEX host_connections_by_replica ON host_connections (replica_id) WHERE replica_id IS NOT NULL;
