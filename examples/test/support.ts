// What the example tests share: running an example as a user does (its own Node process, pointed
// at a Brain by BRAIN_URL and BRAIN_TOKEN) and reading the session journal it prints.
import { expect } from "vitest";
import type { TestDatabase } from "../../testkit/database.js";
import { type Env, spawnNode } from "../../testkit/server-process.js";

export interface ExampleRun {
  /** Everything it printed, stdout and stderr interleaved. */
  out: string;
  lines: string[];
  /** The session it ran, from the SQL query it prints for reading the journal. */
  sessionId: string;
}

/** Runs `script` against the server at `brain` and expects it to exit 0 (the output says why not). */
export async function runExample(
  brain: { url: string; token: string },
  script: string,
  env: Env = {},
): Promise<ExampleRun> {
  const example = spawnNode(script, { env: { BRAIN_URL: brain.url, BRAIN_TOKEN: brain.token, ...env } });
  const { code } = await example.exited;
  const out = example.output();
  expect(code, out).toBe(0);
  const sessionId = /session_id = '([0-9a-f-]{36})'/.exec(out)?.[1] as string;
  return { out, lines: out.split("\n"), sessionId };
}

export interface JournalRecord {
  seq: number;
  kind: string;
  payload: Record<string, unknown>;
}

/** The journal as the examples print it: "<sequence> <kind> <payload JSON>", one line per record. */
export function printedJournal(lines: string[]): JournalRecord[] {
  return lines
    .map((line) => /^(\d+) (\S+) (.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map(([, seq, kind, payload]) => ({
      seq: Number(seq),
      kind: kind as string,
      payload: JSON.parse(payload as string),
    }));
}

/** The session's journal as stored, to compare with what the example printed. */
export function storedJournal(db: TestDatabase, sessionId: string): Promise<JournalRecord[]> {
  return db.sql<JournalRecord[]>`
    SELECT seq, kind, payload FROM brain.journal WHERE session_id = ${sessionId} ORDER BY seq`;
}
