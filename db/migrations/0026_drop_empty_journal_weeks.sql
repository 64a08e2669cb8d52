-- Drops the weekly partitions of the journal and the call table that nothing is left in: the week
-- ended before `cutoff`, no session of it remains, and both partitions are empty. On a Citus
-- cluster retention deletes the sessions one by one (it cannot lock a week's sessions on every
-- shard together, as drop_journal_partitions does), and this drops what that leaves. A session id
-- is the time it was made (UUIDv7), so no session joins a past week once it is empty. Drops at
-- most `weeks` of them; returns how many.
CREATE FUNCTION drop_empty_journal_weeks(cutoff timestamptz, weeks int DEFAULT 1)
RETURNS int
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  p record;
  lo uuid;
  hi uuid;
  week timestamptz;
  found boolean;
  dropped int := 0;
BEGIN
  -- On Citus: reads over every shard, then DDL on those shards, in one transaction, which it
  -- allows over one connection per worker. A setting of no meaning to a Postgres without Citus.
  PERFORM set_config('citus.multi_shard_modify_mode', 'sequential', true);
  FOR p IN
    SELECT c.relname, substr(c.relname, 10) AS stamp FROM pg_inherits i
    JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = to_regclass('records') AND c.relname ~ '^records_w[0-9]{8}$'
    ORDER BY c.relname
  LOOP
    EXIT WHEN dropped >= weeks;
    week := to_date(p.stamp, 'YYYYMMDD')::timestamp AT TIME ZONE 'UTC';
    EXIT WHEN week + interval '7 days' >= cutoff;
    lo := uuid_time_floor(week);
    hi := uuid_time_floor(week + interval '7 days');
    CONTINUE WHEN EXISTS (SELECT 1 FROM sessions s WHERE s.id >= lo AND s.id < hi);
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I) OR EXISTS (SELECT 1 FROM %I)', p.relname, 'calls_w' || p.stamp)
      INTO found;
    CONTINUE WHEN found;
    PERFORM set_config('lock_timeout', '1s', true);
    EXECUTE format('ALTER TABLE calls DETACH PARTITION %I', 'calls_w' || p.stamp);
    EXECUTE format('ALTER TABLE records DETACH PARTITION %I', p.relname);
    EXECUTE format('DROP TABLE %I, %I', 'calls_w' || p.stamp, p.relname);
    dropped := dropped + 1;
  END LOOP;
  RETURN dropped;
END $$;

-- With the owner's rights, as 0023's functions: only the roles given the tables may call it.
REVOKE EXECUTE ON FUNCTION drop_empty_journal_weeks(timestamptz, int) FROM PUBLIC;
DO $$
DECLARE g record;
BEGIN
  FOR g IN
    SELECT DISTINCT grantee FROM information_schema.role_table_grants
    WHERE table_schema = current_schema() AND table_name = 'records' AND grantee NOT IN (current_user, 'PUBLIC')
  LOOP
    EXECUTE format('GRANT EXECUTE ON FUNCTION drop_empty_journal_weeks(timestamptz, int) TO %I', g.grantee);
  END LOOP;
END $$;
