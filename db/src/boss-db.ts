import type { Db } from "pg-boss";
import type { Sql } from "postgres";

const TRANSACTION_SCRIPT = /^\s*BEGIN\b/i;

/**
 * pg-boss's statements on Brain's driver, not on `pg`: the same URL rules (several hosts,
 * `target_session_attrs`, a Unix socket), the same check that a new connection landed on a
 * writable primary, and the same password file. Statements are sent unprepared (pg-boss builds
 * many texts), its LISTEN is the driver's own (re-LISTENed, and pg-boss told, after a reconnect),
 * on `listenOn` (a direct connection beside a pooler).
 */
export function bossDatabase(sql: Sql, listenOn: Sql = sql): Db {
  return {
    async executeSql(text: string, values?: unknown[]) {
      // A script that is its own transaction (BEGIN; … COMMIT;, pg-boss's installs and upgrades)
      // goes on a reserved connection: the driver refuses a BEGIN on a shared one.
      const on = TRANSACTION_SCRIPT.test(text) ? await sql.reserve() : null;
      try {
        const result = await (on ?? sql).unsafe(text, (values ?? []).map(pgValue) as never[], { prepare: false });
        return { rows: rowsOf(result) };
      } finally {
        on?.release();
      }
    },
    async listen(channel: string, onNotification: (payload: string) => void, onReconnect: () => void) {
      let first = true;
      const sub = await listenOn.listen(channel, onNotification, () => {
        if (!first) onReconnect();
        first = false;
      });
      return { close: () => sub.unlisten() };
    },
  };
}

/**
 * The rows of every statement, as pg-boss reads a multi-statement answer (its background
 * migrations claim a command after taking a lock, and look for both rows): the driver answers a
 * multi-statement query with one row list per statement, a single statement with its rows.
 */
function rowsOf(result: readonly unknown[]): unknown[] {
  if (result.length === 0 || !result.every((r) => Array.isArray(r))) return [...result];
  return result.flatMap((r) => (Array.isArray(r) ? [...r] : [r]));
}

/**
 * A parameter as `pg` sends it, which pg-boss is written for: unprepared statements are sent
 * whole, their parameters untyped, so an array goes as an array literal and an object as JSON.
 */
export function pgValue(value: unknown): unknown {
  if (value === undefined) return null;
  if (Array.isArray(value)) return arrayLiteral(value);
  if (value === null || Buffer.isBuffer(value) || value instanceof Date || typeof value !== "object") return value;
  return JSON.stringify(value);
}

function arrayLiteral(items: readonly unknown[]): string {
  const element = (item: unknown): string => {
    if (item === null || item === undefined) return "NULL";
    if (Array.isArray(item)) return arrayLiteral(item);
    const text = typeof item === "object" && !(item instanceof Date) ? JSON.stringify(item) : String(item);
    return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
  };
  return `{${items.map(element).join(",")}}`;
}
