import type { PendingQuery, Row, TransactionSql } from "postgres";
import { driverDir } from "../connect.js";
import { schemaOf } from "../tables.js";

/**
 * A journal write sent whole to the Citus worker holding its session (docs/scaling.md). Citus
 * cannot route a statement that inserts in a CTE, as every append and call transition does: it
 * runs each CTE as a step of its own, coordinator to worker and back, 5 to 7 a write. Instead the
 * statement, built as on one Postgres, goes as the text of one call of
 * `on_session_shards(session, statement, parameters)`, a function Citus delegates to that worker
 * (citus.ts creates it), which names the session's shards in place of the tables and runs it
 * there: one round trip, planned and run by that worker's Postgres alone.
 *
 * The statement must concern that session only: it runs against the session's shards, so a row of
 * another session would not be found there (the writer gives each write a statement of its own).
 * Each parameter is passed as text and must be cast where it is used (`$2::bigint`); at most
 * MAX_PARAMETERS of them.
 */
export const MAX_PARAMETERS = 8;

const driver = (await import(new URL("types.js", driverDir).href)) as {
  stringify(q: unknown, first: string, arg: unknown, parameters: unknown[], types: unknown[], options: object): string;
};
const STRINGIFY_OPTIONS = { transform: { undefined: undefined } };
const UNCAST = /\$(\d+)(?!\d|::)/;

/** The text and parameters of a query postgres.js has not sent (queries are lazy: it never will). */
export function statementOf<T extends Row>(query: PendingQuery<T[]>): { text: string; parameters: string[] } {
  const q = query as unknown as { strings: string[]; args: unknown[] };
  const values: unknown[] = [];
  const text = driver.stringify(q, q.strings[0]!, q.args[0], values, [], STRINGIFY_OPTIONS);
  if (values.length > MAX_PARAMETERS)
    throw new Error(`a delegated statement takes at most ${MAX_PARAMETERS} parameters`);
  // Every use of a parameter cast: passed as text, an uncast one would be taken for text.
  const uncast = UNCAST.exec(text);
  if (uncast) throw new Error(`a delegated statement's $${uncast[1]} needs a cast`);
  return { text, parameters: values.map(asText) };
}

function asText(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  throw new Error(`a delegated statement's parameters are strings, numbers or booleans, not ${typeof value}`);
}

/**
 * Runs `statement` on the worker holding `session`'s shards, in the transaction of `tx`. `columns`
 * is the statement's result as a column definition list (`seq bigint, kind text`), which its rows
 * must match exactly; they come back typed as from the statement itself.
 */
export function onSessionShards<T extends Row>(
  tx: TransactionSql,
  session: string,
  statement: PendingQuery<T[]>,
  columns: string,
): PendingQuery<T[]> {
  const { text, parameters } = statementOf(statement);
  // A tagged query, as the statement would have been: a pipeline's marking (writer/batch.ts)
  // reaches it, where one made with unsafe() would carry a Sync and end the pipeline.
  const fn = tx(`${schemaOf(tx)}.on_session_shards`);
  return tx<
    T[]
  >`SELECT * FROM ${fn}(${session}::uuid, ${text}::text, ${parameters}::text[]) AS r(${tx.unsafe(columns)})`;
}
