import type { Sql } from "postgres";

export interface ReplicaLag {
  /** Whether the read connection is on a standby (false: it reads the primary itself). */
  standby: boolean;
  /** WAL the replica has yet to replay, in bytes (0 when caught up, or not a standby). */
  bytes: number;
  /**
   * How old what the replica shows is: 0 when it has replayed all the primary wrote, else the
   * time since the last transaction it replayed committed on the primary.
   */
  seconds: number;
}

/** How far the replica `read` is behind the primary `primary` (BRAIN_READ_URL's lag). */
export async function replicaLag(primary: Sql, read: Sql): Promise<ReplicaLag> {
  const [head] = await primary<{ lsn: string }[]>`SELECT pg_current_wal_lsn()::text AS lsn`;
  const [row] = await read<{ standby: boolean; bytes: string | null; seconds: number | null }[]>`
    SELECT pg_is_in_recovery() AS standby,
           pg_wal_lsn_diff(${head!.lsn}::pg_lsn, pg_last_wal_replay_lsn())::text AS bytes,
           extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8 AS seconds`;
  const bytes = row!.standby ? Math.max(0, Number(row!.bytes ?? 0)) : 0;
  return { standby: row!.standby, bytes, seconds: bytes > 0 ? Math.max(0, row!.seconds ?? 0) : 0 };
}
