import type { Sql } from "postgres";

/** What an acknowledged write is worth on this database, from the settings in force. */
export interface Durability {
  /** `synchronous_commit`: off, local, remote_write, on, remote_apply. */
  synchronousCommit: string;
  /** `synchronous_standby_names`; empty: no standby is waited for. */
  synchronousStandbys: string;
  /** One sentence: what survives once Brain acknowledged a write. */
  meaning: string;
}

/** Reads the durability in force for this role and database (either may override the server's). */
export async function durability(sql: Sql): Promise<Durability> {
  const [row] = await sql<{ commit: string; standbys: string }[]>`
    SELECT current_setting('synchronous_commit') AS commit,
           current_setting('synchronous_standby_names') AS standbys`;
  const synchronousCommit = row?.commit ?? "on";
  const synchronousStandbys = row?.standbys ?? "";
  return { synchronousCommit, synchronousStandbys, meaning: meaningOf(synchronousCommit, synchronousStandbys) };
}

/**
 * Brain acknowledges a write once its commit returned, so the acknowledgment is worth what the
 * commit is: Postgres's own rules for each setting, in a sentence an operator can act on.
 */
export function meaningOf(synchronousCommit: string, standbys: string): string {
  if (synchronousCommit === "off") {
    return "an acknowledged write can be lost if Postgres crashes (synchronous_commit=off)";
  }
  const local = "an acknowledged write survives a crash of Postgres";
  if (standbys.trim() === "" || synchronousCommit === "local") {
    return `${local}; a fail-over to an asynchronous standby can lose the latest ones`;
  }
  if (synchronousCommit === "remote_write") {
    return `${local} and the loss of the primary, unless a synchronous standby's OS crashes with it`;
  }
  return `${local} and the loss of the primary: a synchronous standby (${standbys.trim()}) has it on disk`;
}
