// Application HTTP servers and journal readers for the tests of tools served over HTTP (the
// Application tool extension and the v1 plain-JSON convention), which run a real Brain server and
// worker from testkit/brain-with-worker.ts.
import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import type { PlacedTool } from "@aexhq/brain";
import type { Sql } from "@aexhq/brain-db/connect";
import { z } from "zod";
import type { BrainWithWorker } from "../../../testkit/brain-with-worker.js";

/** The application's records, as the seed's `lookup` example reads them by `${prefix}${id}`. */
export const records = new Map([["customer:42", { value: "Ada Lovelace" }]]);

/** The seed's `lookup` declaration without its `run`: each test application gives its own. */
export const lookupDeclaration = {
  name: "lookup",
  description: "Look up one record.",
  input: z.object({ id: z.string() }),
  output: z.object({ value: z.string() }).nullable(),
  options: z.object({ prefix: z.string() }),
};

export interface AppServer {
  url: string;
  close(): Promise<void>;
}

/** An application's HTTP server on a free local port. */
export async function serveApp(listener: RequestListener, path = "/tools"): Promise<AppServer> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A session whose scripted model calls `tool` once with `input`, then says "done". */
export async function runOnce(
  stack: BrainWithWorker,
  placed: PlacedTool,
  input: unknown,
): Promise<{ sessionId: string }> {
  const session = await stack.client.sessions.create({
    model: {
      provider: "scripted",
      script: [{ toolCalls: [{ name: placed.name, input: input as never }] }, { text: "done" }],
    },
    tools: [placed],
  });
  const text = await session.send("go");
  if (text !== "done") throw new Error(`the turn ended with ${JSON.stringify(text)}`);
  return { sessionId: session.id };
}

export interface CallRecord {
  seq: number;
  kind: string;
  payload: {
    call?: number;
    data?: unknown;
    content?: string;
    outcome?: {
      status: string;
      value?: unknown;
      cause?: string;
      error?: { code: string; message: string; details?: unknown };
    };
    deadline?: number | null;
  };
}

export interface CallJournal {
  /** The sequence of its tool_call_started. */
  seq: number;
  started: CallRecord;
  /** Its own records after tool_call_started, in order. */
  records: CallRecord[];
  /** The terminal outcome (tool_call_ended). */
  outcome: NonNullable<CallRecord["payload"]["outcome"]>;
}

/** The session's only tool call, as journaled. */
export async function theCall(sql: Sql, sessionId: string): Promise<CallJournal> {
  const [started] = await sql<CallRecord[]>`
    SELECT seq, kind, payload FROM brain.journal WHERE session_id = ${sessionId} AND kind = 'tool_call_started'`;
  if (!started) throw new Error("no tool call in the session");
  const records = await sql<CallRecord[]>`
    SELECT seq, kind, payload FROM brain.journal
    WHERE session_id = ${sessionId} AND seq > ${started.seq} AND (payload->>'call')::bigint = ${started.seq}
    ORDER BY seq`;
  const ended = records.find((r) => r.kind === "tool_call_ended");
  if (!ended?.payload.outcome) throw new Error(`the call has not ended: ${JSON.stringify(records)}`);
  return { seq: started.seq, started, records, outcome: ended.payload.outcome };
}

/** Every record of the session, to show that nothing more was written. */
export async function recordCount(sql: Sql, sessionId: string): Promise<number> {
  const [row] = await sql<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM brain.journal WHERE session_id = ${sessionId}`;
  return row!.n;
}
