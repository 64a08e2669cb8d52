-- The journal and the call tables partitioned by session, so that retention drops whole partitions
-- instead of deleting rows. Session ids are UUIDv7 (their first 48 bits the creation time in ms),
-- so range partitions of session_id are weeks of sessions: every statement that names its session
-- reaches one partition, and a week whose sessions all ended before the retention window is
-- dropped at once. Rows of other ids (sessions made before this migration, random ids) live in a
-- default partition, which keeps every existing record where it is (the old tables become the
-- default partitions) and is pruned row by row as before.

-- The UUIDv7 bound of a time: its millisecond prefix, the rest zero.
CREATE FUNCTION uuid_time_floor(at timestamptz) RETURNS uuid
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT (lpad(to_hex((extract(epoch FROM at) * 1000)::bigint), 12, '0') || '00000000000000000000')::uuid
$$;

-- The week a partition holds: weeks start on Thursdays 00:00 UTC (the Unix epoch's weekday).
CREATE FUNCTION journal_week_start(at timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT to_timestamp(floor(extract(epoch FROM at) / 604800) * 604800)
$$;

DO $$
DECLARE
  views text[][];
  v text[];
  g record;
BEGIN
  -- The views on the two tables, as they read now: recreated on the partitioned tables below.
  SELECT coalesce(array_agg(ARRAY[c.relname::text, pg_get_viewdef(c.oid)]), '{}') INTO views
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = current_schema() AND c.relkind = 'v' AND EXISTS (
    SELECT 1 FROM pg_depend d JOIN pg_rewrite w ON w.oid = d.objid
    WHERE w.ev_class = c.oid AND d.refobjid IN (to_regclass('records'), to_regclass('calls')));

  ALTER TABLE records RENAME TO records_default;
  ALTER TABLE records_default RENAME CONSTRAINT records_pkey TO records_default_pkey;
  CREATE TABLE records (LIKE records_default INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
    PRIMARY KEY (session_id, seq)) PARTITION BY RANGE (session_id);
  ALTER TABLE records ATTACH PARTITION records_default DEFAULT;

  ALTER TABLE calls RENAME TO calls_default;
  ALTER TABLE calls_default RENAME CONSTRAINT calls_pkey TO calls_default_pkey;
  ALTER INDEX calls_awaiting RENAME TO calls_default_awaiting;
  ALTER INDEX calls_open_by_connection RENAME TO calls_default_open_by_connection;
  ALTER INDEX calls_open_by_deadline RENAME TO calls_default_open_by_deadline;
  ALTER INDEX calls_pending_by_host RENAME TO calls_default_pending_by_host;
  ALTER INDEX calls_pending_worker RENAME TO calls_default_pending_worker;
  CREATE TABLE calls (LIKE calls_default INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
    PRIMARY KEY (session_id, seq)) PARTITION BY RANGE (session_id);
  ALTER TABLE calls ATTACH PARTITION calls_default DEFAULT;
  -- Partitioned indexes: each attaches the default partition's own, built already.
  CREATE INDEX calls_awaiting ON calls (session_id, seq) WHERE state = 'awaiting';
  CREATE INDEX calls_open_by_connection ON calls (connection_id) WHERE state IN ('running', 'returned');
  CREATE INDEX calls_open_by_deadline ON calls (deadline_at) WHERE state <> 'ended' AND deadline_at IS NOT NULL;
  CREATE INDEX calls_pending_by_host ON calls (host_id) WHERE state = 'pending';
  CREATE INDEX calls_pending_worker ON calls (session_id, seq) WHERE state = 'pending' AND executor = 'worker';

  ALTER TABLE mcp_tasks DROP CONSTRAINT mcp_tasks_session_id_seq_fkey;
  ALTER TABLE mcp_tasks ADD CONSTRAINT mcp_tasks_session_id_seq_fkey
    FOREIGN KEY (session_id, seq) REFERENCES calls (session_id, seq) ON DELETE CASCADE;

  FOREACH v SLICE 1 IN ARRAY views LOOP
    EXECUTE format('CREATE OR REPLACE VIEW %I AS %s', v[1], v[2]);
  END LOOP;

  -- What a runtime role was granted on the tables (brain migrate --grant-to), it keeps.
  FOR g IN
    SELECT grantee, privilege_type, table_name FROM information_schema.role_table_grants
    WHERE table_schema = current_schema() AND table_name IN ('records_default', 'calls_default')
      AND grantee <> current_user
  LOOP
    EXECUTE format('GRANT %s ON %I TO %s', g.privilege_type, replace(g.table_name, '_default', ''),
      CASE WHEN g.grantee = 'PUBLIC' THEN 'PUBLIC' ELSE quote_ident(g.grantee) END);
  END LOOP;
END $$;

-- The weeks of sessions from `back` weeks ago to `ahead` weeks on: one partition each of records
-- and calls. A partition is made as a table of its own, given the rows of its range the default
-- partition holds (ids made before 0023 fall anywhere), then attached: an attach locks the parent
-- only against other DDL, and checks the default partition, not the other weeks. Runs with its
-- owner's rights, so a runtime role that may only read and write can keep partitions ahead.
-- Returns how many it made.
CREATE FUNCTION ensure_journal_partitions(ahead int, back int DEFAULT 0) RETURNS int
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  made int := 0;
  first timestamptz := journal_week_start(now());
  week timestamptz;
  t text;
  name text;
  lo uuid;
  hi uuid;
  tasks boolean;
BEGIN
  FOR i IN -back..ahead LOOP
    week := first + make_interval(days => 7 * i);
    lo := uuid_time_floor(week);
    hi := uuid_time_floor(week + interval '7 days');
    FOREACH t IN ARRAY ARRAY['records', 'calls'] LOOP
      name := format('%s_w%s', t, to_char(week AT TIME ZONE 'UTC', 'YYYYMMDD'));
      CONTINUE WHEN to_regclass(name) IS NOT NULL;
      EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name, t);
      -- Moving a call deletes it from the default partition, which cascades to its MCP task: the
      -- tasks of the range are kept aside and put back once the call is in its week.
      tasks := t = 'calls' AND EXISTS (SELECT 1 FROM mcp_tasks m WHERE m.session_id >= lo AND m.session_id < hi);
      IF tasks THEN
        CREATE TEMP TABLE IF NOT EXISTS journal_moved_tasks (LIKE mcp_tasks) ON COMMIT DROP;
        INSERT INTO journal_moved_tasks SELECT * FROM mcp_tasks m WHERE m.session_id >= lo AND m.session_id < hi;
      END IF;
      EXECUTE format('WITH moved AS (DELETE FROM %I WHERE session_id >= %L AND session_id < %L RETURNING *)
        INSERT INTO %I SELECT * FROM moved', t || '_default', lo, hi, name);
      EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', t, name, lo, hi);
      IF tasks THEN
        INSERT INTO mcp_tasks SELECT * FROM journal_moved_tasks;
        DELETE FROM journal_moved_tasks;
      END IF;
      made := made + 1;
    END LOOP;
  END LOOP;
  RETURN made;
END $$;

-- Drops the weeks of sessions that retention has done with: the week ended before `cutoff`, and
-- every session made in it ended before `cutoff` (or is gone). Its sessions are locked, the rows
-- that refer to its calls deleted, its two partitions detached and dropped, then the sessions' rows
-- deleted (with what cascades from them). One week per transaction is the caller's to choose: this
-- drops at most `weeks` of them. Returns what went.
CREATE FUNCTION drop_journal_partitions(cutoff timestamptz, weeks int DEFAULT 1)
RETURNS TABLE (dropped_weeks int, dropped_sessions bigint, dropped_records bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  p record;
  n bigint;
  lo uuid;
  hi uuid;
  week timestamptz;
BEGIN
  dropped_weeks := 0;
  dropped_sessions := 0;
  dropped_records := 0;
  FOR p IN
    SELECT c.relname, substr(c.relname, 10) AS stamp FROM pg_inherits i
    JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = to_regclass('records') AND c.relname ~ '^records_w[0-9]{8}$'
    ORDER BY c.relname
  LOOP
    EXIT WHEN dropped_weeks >= weeks;
    week := to_date(p.stamp, 'YYYYMMDD')::timestamp AT TIME ZONE 'UTC';
    EXIT WHEN week + interval '7 days' >= cutoff;
    lo := uuid_time_floor(week);
    hi := uuid_time_floor(week + interval '7 days');
    CONTINUE WHEN EXISTS (
      SELECT 1 FROM sessions s WHERE s.id >= lo AND s.id < hi AND (s.status = 'active' OR s.ended_at >= cutoff));
    PERFORM 1 FROM sessions s WHERE s.id >= lo AND s.id < hi ORDER BY s.id FOR UPDATE;
    EXECUTE format('SELECT count(*) FROM %I', p.relname) INTO n;
    -- The rows under the sessions go first, the partitions last: detaching locks the parent (every
    -- write of the journal waits) until this transaction commits, so nothing else follows it. A
    -- partition with rows referring to it cannot go: mcp_tasks first.
    DELETE FROM mcp_tasks m WHERE m.session_id >= lo AND m.session_id < hi;
    DELETE FROM activation_budgets b WHERE b.session_id >= lo AND b.session_id < hi;
    DELETE FROM tool_model_calls t WHERE t.session_id >= lo AND t.session_id < hi;
    WITH d AS (DELETE FROM sessions s WHERE s.id >= lo AND s.id < hi RETURNING 1)
    SELECT dropped_sessions + count(*) INTO dropped_sessions FROM d;
    -- Writes queue behind a detach waiting for its lock: one that cannot have it within a second
    -- (a long query holds the table) fails the whole drop, to be tried again on the next run.
    PERFORM set_config('lock_timeout', '1s', true);
    EXECUTE format('ALTER TABLE calls DETACH PARTITION %I', 'calls_w' || p.stamp);
    EXECUTE format('ALTER TABLE records DETACH PARTITION %I', p.relname);
    EXECUTE format('DROP TABLE %I, %I', 'calls_w' || p.stamp, p.relname);
    dropped_records := dropped_records + n;
    dropped_weeks := dropped_weeks + 1;
  END LOOP;
  RETURN NEXT;
END $$;

-- They run with the owner's rights: only the roles given the tables (and the owner) may call them.
REVOKE EXECUTE ON FUNCTION ensure_journal_partitions(int, int), drop_journal_partitions(timestamptz, int) FROM PUBLIC;
DO $$
DECLARE g record;
BEGIN
  FOR g IN
    SELECT DISTINCT grantee FROM information_schema.role_table_grants
    WHERE table_schema = current_schema() AND table_name = 'records' AND grantee NOT IN (current_user, 'PUBLIC')
  LOOP
    EXECUTE format('GRANT EXECUTE ON FUNCTION ensure_journal_partitions(int, int), drop_journal_partitions(timestamptz, int) TO %I', g.grantee);
  END LOOP;
END $$;

SELECT ensure_journal_partitions(8);
