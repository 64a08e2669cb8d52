/** The setup claim of an HTTP Environment: one setup at a time, and no wedge when its holder dies. */
import type { Sql } from "postgres";
import { tables } from "../tables.js";
import { type EnvironmentRow, type RawRow, readEnvironment, type StoredEnvironment, toRow } from "./environments.js";

/** Advisory-lock class of Environment setups (the two-key form: it never meets single-key locks). */
const SETUP_LOCK_CLASS = "brain:environment-setup";

/**
 * What one setup attempt found. `busy`: someone else is setting it up right now; `abandoned`: the
 * setup gave up (its caller stopped waiting) and nothing was recorded.
 */
export type SetupAttempt =
  | { kind: "busy" }
  | { kind: "abandoned" }
  | { kind: "missing" }
  | { kind: "done"; row: EnvironmentRow; ran: boolean };

/** The setup's verdict; null gives up without recording anything (the caller stopped waiting). */
export type SetupVerdict = { ok: true } | { ok: false; error: string } | null;

/**
 * One attempt to set an Environment up, exactly once among concurrent callers: a transaction-level
 * advisory lock per (session, name), taken without waiting. Its holder re-reads the row and runs
 * `run` (unless `force` is false and the Environment is no longer `new`), then records `ready` or
 * `failed`, but only if the configuration it ran is still the current one. The lock dies with its
 * connection, so a process that crashes mid-setup leaves the Environment `new` for the next caller.
 * No row lock is held while `run` works, so updates and deletes never wait for a setup.
 */
export async function attemptEnvironmentSetup(
  sql: Sql,
  sessionId: string,
  name: string,
  force: boolean,
  run: (env: StoredEnvironment) => Promise<SetupVerdict>,
): Promise<SetupAttempt> {
  const brain = tables(sql);
  let attempt: SetupAttempt = { kind: "busy" };
  await sql.begin(async (tx) => {
    const [lock] = await tx<{ locked: boolean }[]>`
      SELECT pg_try_advisory_xact_lock(hashtext(${SETUP_LOCK_CLASS}), hashtext(${`${sessionId}/${name}`})) AS locked`;
    if (!lock?.locked) return;
    const env = await readEnvironment(tx, sessionId, name);
    if (!env) {
      attempt = { kind: "missing" };
      return;
    }
    if (!env.row.config.setup || (!force && env.row.status !== "new")) {
      attempt = { kind: "done", row: env.row, ran: false };
      return;
    }
    const verdict = await run(env);
    if (verdict === null) {
      attempt = { kind: "abandoned" };
      return;
    }
    const [r] = await tx<RawRow[]>`
      UPDATE ${brain.environments} e SET status = ${verdict.ok ? "ready" : "failed"},
             setup_error = ${verdict.ok ? null : verdict.error.slice(0, 8192)}
      WHERE e.session_id = ${sessionId} AND e.name = ${name} AND e.revision = ${env.row.version}::bigint
      RETURNING e.name, e.type, e.config, e.status, e.setup_error, e.revision::text AS version`;
    // Changed while it ran: this result is for a configuration that no longer exists.
    const current = r ? toRow(r) : (await readEnvironment(tx, sessionId, name))?.row;
    attempt = current ? { kind: "done", row: current, ran: true } : { kind: "missing" };
  });
  return attempt;
}
