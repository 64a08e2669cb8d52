-- A session's references (its host, the server that owns it, the application token that created
-- it) are checked when they are written, not every time the row is (issue 14).
--
-- Every append and every call transition updates its session's row (`last_seq`). A foreign key
-- skips its check on an update that leaves its columns alone, unless the row being replaced was
-- written by the same transaction: then it checks again, a trigger query with a key-share lock
-- on the parent row, per key. A journal batch often updates a session twice (an append and a
-- finish, two finishes), so the three keys below were checked about once a tool call each,
-- though nothing in them changed: about a tenth of Postgres's CPU per call under tool_throughput.
--
-- The same rules, written where they apply:
--
-- * A session row inserted, or updated so that one of these columns changes, must name a parent
--   that exists. The check takes a key-share lock on the parent row, as the key's check did, so
--   a parent being deleted meanwhile is waited for, and a parent deleted first is not found.
-- * A parent row (a host, a server, a token) that a session names cannot be deleted, and its id
--   cannot change (the keys' NO ACTION). The check runs after the parent row is locked for the
--   delete, so it sees every session whose insert committed before, and a session inserted after
--   waits for the delete and then finds no parent. That holds for deletes run READ COMMITTED,
--   as Brain runs them (retention); a delete in a REPEATABLE READ transaction checks its own
--   snapshot, where a key's check would also have looked at the latest committed sessions.
--
-- The errors are the ones the keys raised (SQLSTATE 23503, the same constraint names).
-- db/test/session-references.test.ts proves each rule, and that a batch updating a session twice
-- no longer touches the parent rows.

ALTER TABLE sessions
  DROP CONSTRAINT sessions_host_id_fkey,
  DROP CONSTRAINT sessions_owner_id_fkey,
  DROP CONSTRAINT sessions_token_id_fkey;

-- The error a missing parent raises: the one its foreign key raised.
CREATE FUNCTION session_parent_missing(key text, parent text, id uuid) RETURNS void
  LANGUAGE plpgsql AS $$
BEGIN
  RAISE foreign_key_violation USING CONSTRAINT = format('sessions_%s_fkey', key), TABLE = 'sessions',
    MESSAGE = format('insert or update on table "sessions" violates foreign key constraint "sessions_%s_fkey"', key),
    DETAIL = format('Key (%s)=(%s) is not present in table "%s".', key, id, parent);
END $$;

-- The functions resolve names in the schema they were created in (SET search_path FROM CURRENT),
-- so a trigger fired from any connection, whatever its search_path, reads Brain's tables.
CREATE FUNCTION session_references_exist() RETURNS trigger
  LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  IF NEW.host_id IS NOT NULL AND (TG_OP = 'INSERT' OR NEW.host_id IS DISTINCT FROM OLD.host_id) THEN
    PERFORM FROM hosts WHERE id = NEW.host_id FOR KEY SHARE;
    IF NOT FOUND THEN PERFORM session_parent_missing('host_id', 'hosts', NEW.host_id); END IF;
  END IF;
  IF NEW.owner_id IS NOT NULL AND (TG_OP = 'INSERT' OR NEW.owner_id IS DISTINCT FROM OLD.owner_id) THEN
    PERFORM FROM servers WHERE id = NEW.owner_id FOR KEY SHARE;
    IF NOT FOUND THEN PERFORM session_parent_missing('owner_id', 'servers', NEW.owner_id); END IF;
  END IF;
  IF NEW.token_id IS NOT NULL AND (TG_OP = 'INSERT' OR NEW.token_id IS DISTINCT FROM OLD.token_id) THEN
    PERFORM FROM app_tokens WHERE id = NEW.token_id FOR KEY SHARE;
    IF NOT FOUND THEN PERFORM session_parent_missing('token_id', 'app_tokens', NEW.token_id); END IF;
  END IF;
  RETURN NULL;
END $$;

-- Fired only by statements that set one of the columns, and only when it changed: an append's
-- `UPDATE sessions SET last_seq = ...` fires nothing.
CREATE TRIGGER sessions_references_inserted AFTER INSERT ON sessions
  FOR EACH ROW WHEN (NEW.host_id IS NOT NULL OR NEW.owner_id IS NOT NULL OR NEW.token_id IS NOT NULL)
  EXECUTE FUNCTION session_references_exist();
CREATE TRIGGER sessions_references_updated AFTER UPDATE OF host_id, owner_id, token_id ON sessions
  FOR EACH ROW WHEN (NEW.host_id IS DISTINCT FROM OLD.host_id OR NEW.owner_id IS DISTINCT FROM OLD.owner_id
                     OR NEW.token_id IS DISTINCT FROM OLD.token_id)
  EXECUTE FUNCTION session_references_exist();

-- The parent side. TG_ARGV: the sessions column that names this table's rows, and the constraint.
CREATE FUNCTION session_parent_unreferenced() RETURNS trigger
  LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  referenced boolean;
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.id = OLD.id THEN
    RETURN NULL;
  END IF;
  EXECUTE format('SELECT EXISTS (SELECT 1 FROM sessions WHERE %I = $1)', TG_ARGV[0]) INTO referenced USING OLD.id;
  IF referenced THEN
    RAISE foreign_key_violation USING CONSTRAINT = TG_ARGV[1], TABLE = 'sessions',
      MESSAGE = format('update or delete on table "%s" violates foreign key constraint "%s" on table "sessions"',
                       TG_TABLE_NAME, TG_ARGV[1]),
      DETAIL = format('Key (id)=(%s) is still referenced from table "sessions".', OLD.id);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER hosts_referenced_by_sessions AFTER DELETE OR UPDATE OF id ON hosts
  FOR EACH ROW EXECUTE FUNCTION session_parent_unreferenced('host_id', 'sessions_host_id_fkey');
CREATE TRIGGER servers_referenced_by_sessions AFTER DELETE OR UPDATE OF id ON servers
  FOR EACH ROW EXECUTE FUNCTION session_parent_unreferenced('owner_id', 'sessions_owner_id_fkey');
CREATE TRIGGER app_tokens_referenced_by_sessions AFTER DELETE OR UPDATE OF id ON app_tokens
  FOR EACH ROW EXECUTE FUNCTION session_parent_unreferenced('token_id', 'sessions_token_id_fkey');
