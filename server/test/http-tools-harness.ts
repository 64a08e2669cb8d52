// A Brain server, a worker and application HTTP servers, all real, for the tests of tools served
// over HTTP: the Application tool extension and the v1 plain-JSON convention.
import { mkdtempSync } from "node:fs";
import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Brain, type PlacedTool } from "@aexhq/brain";
import type { Sql } from "@aexhq/brain-db";
import { type RunningWorker, startWorker } from "@aexhq/brain-worker";
import { type InProcessBrain, startBrain } from "../../testkit/brain.js";
import { TEST_SECRET_KEY } from "../../testkit/secrets.js";

export interface Stack {
  brain: InProcessBrain;
  worker: RunningWorker;
  client: Brain;
  close(): Promise<void>;
}

export async function startStack(env: Record<string, string> = {}): Promise<Stack> {
  const brain = await startBrain({ env });
  const worker = await startWorker({
    databaseUrl: brain.db.url,
    schema: "brain",
    maxEmittedBytes: Number(env.BRAIN_MAX_EMITTED_BYTES ?? 1024 * 1024),
    concurrency: 4,
    cacheDir: mkdtempSync(join(tmpdir(), "brain-http-tools-")),
    logLevel: "silent",
    maxModelCalls: 100,
    secretKey: Buffer.from(TEST_SECRET_KEY, "hex"),
  });
  const client = new Brain({ url: brain.url, token: brain.token });
  return {
    brain,
    worker,
    client,
    async close() {
      await client.close();
      await worker.stop();
      await brain.close();
    },
  };
}

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
export async function runOnce(stack: Stack, placed: PlacedTool, input: unknown): Promise<{ sessionId: string }> {
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
