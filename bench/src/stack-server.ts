import { corkPerTick } from "@aexhq/brain-contracts";
import websocket from "@fastify/websocket";
import Fastify, { type FastifyInstance } from "fastify";
import postgres from "postgres";
import type { WebSocket } from "ws";
import { calibrateWallClock, wallNow } from "./clock.js";
import { serve } from "./rpc.js";
import type { Frame, StackServerArgs, TurnBody } from "./stack-protocol.js";

/**
 * The bare stack (floor_stack): Fastify, @fastify/websocket and postgres.js, as Brain's server
 * uses them, doing only what any durable tool runtime must do for a turn, with none of Brain's
 * own logic (no validation beyond JSON, no budgets, no call rows, no Agentloop, no recovery).
 *
 * - Every record is a row committed by a group commit on one connection: BEGIN, one INSERT of the
 *   batch's rows, one NOTIFY, COMMIT, pipelined in one round trip (the journal writer's fast path).
 * - A turn (`POST /turn/:id`): the user message commits; each round commits the model's answer with
 *   its calls' intents before any invoke frame leaves (at most once), each result commits before
 *   its ack; the final answer commits before the HTTP answer.
 * - An emit frame commits one record before its ack.
 */

type Row = { session_id: string; seq: number; kind: string; payload: unknown };
type Pending = { rows: Row[]; done: () => void; failed: (e: unknown) => void };

let sql: postgres.Sql | undefined;
/** While recording: each call's intent sent to its commit → its result sent to its commit (ms). */
let roundtrips: number[] | undefined;
let app: FastifyInstance | undefined;

function groupCommit(conn: postgres.ReservedSql, channel: string) {
  const queue: Pending[] = [];
  let flushing = false;
  const flush = async () => {
    flushing = true;
    while (queue.length > 0) {
      const batch = queue.splice(0, 256);
      const rows = batch.flatMap((p) => p.rows);
      try {
        await Promise.all([
          conn`BEGIN`.execute(),
          conn`INSERT INTO bench.stack_records (session_id, seq, kind, payload)
               SELECT session_id, seq, kind, payload FROM jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb)
                 AS r(session_id uuid, seq int, kind text, payload jsonb)`.execute(),
          conn`SELECT pg_notify(${channel}, ${String(rows.length)})`.execute(),
          conn`COMMIT`.execute(),
        ]);
        for (const p of batch) p.done();
      } catch (error) {
        // A floor has no failure path: the run reports the error and stops.
        for (const p of batch) p.failed(error);
      }
    }
    flushing = false;
  };
  return (rows: Row[]) =>
    new Promise<void>((done, failed) => {
      queue.push({ rows, done, failed });
      if (!flushing) void flush();
    });
}

serve({
  async start(args: StackServerArgs): Promise<{ port: number }> {
    calibrateWallClock();
    sql = postgres(args.url, { max: 2, onnotice: () => {} });
    await sql`CREATE SCHEMA IF NOT EXISTS bench`;
    await sql`CREATE TABLE IF NOT EXISTS bench.stack_records (
      session_id uuid NOT NULL, seq int NOT NULL, kind text NOT NULL, payload jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (session_id, seq))`;
    const commit = groupCommit(await sql.reserve(), args.channel);
    const seqs = new Map<string, number>();
    const next = (session: string) => {
      const s = (seqs.get(session) ?? 0) + 1;
      seqs.set(session, s);
      return s;
    };
    const row = (session: string, kind: string, payload: unknown): Row => ({
      session_id: session,
      seq: next(session),
      kind,
      payload,
    });
    /** Results awaited by (session:seq) of the call's intent. */
    const awaiting = new Map<string, (output: unknown) => void>();
    let host: WebSocket | undefined;
    const send = (frame: Frame) => host?.send(JSON.stringify(frame));

    const fastify = Fastify({ logger: false });
    app = fastify;
    await fastify.register(websocket);
    fastify.get("/ws", { websocket: true }, (socket, request) => {
      corkPerTick(request.raw.socket);
      host = socket;
      socket.on("message", (data: Buffer) => {
        const frame = JSON.parse(data.toString("utf8")) as Frame;
        if (frame.t === "result") {
          awaiting.get(`${frame.s}:${frame.q}`)?.(frame.output);
        } else if (frame.t === "emit") {
          commit([row(frame.s, "extension", frame.data)]).then(() => send({ t: "ack", s: frame.s, q: frame.q }));
        }
      });
    });
    fastify.post<{ Params: { id: string }; Body: TurnBody }>("/turn/:id", async (request) => {
      const id = request.params.id;
      await commit([row(id, "user_message", { text: request.body.text })]);
      for (const [r, calls] of request.body.rounds.entries()) {
        const intents = Array.from({ length: calls }, (_, i) => row(id, "tool_call_started", { name: "work", i }));
        // As tool_dispatch reads created_at: the moment the intents leave for their commit.
        const at = wallNow();
        await commit([row(id, "model_answer", { round: r, calls }), ...intents]);
        await Promise.all(
          intents.map(
            (intent) =>
              new Promise<void>((resolve, reject) => {
                awaiting.set(`${id}:${intent.seq}`, (output) => {
                  roundtrips?.push(wallNow() - at);
                  awaiting.delete(`${id}:${intent.seq}`);
                  commit([row(id, "tool_call_ended", { call: intent.seq, output })]).then(() => {
                    send({ t: "ack", s: id, q: intent.seq });
                    resolve();
                  }, reject);
                });
                send({ t: "invoke", s: id, q: intent.seq, input: intent.payload, at });
              }),
          ),
        );
      }
      await commit([row(id, "model_answer", { text: "done" }), row(id, "activation_ended", { status: "completed" })]);
      return { text: "done" };
    });
    await fastify.listen({ port: 0, host: "127.0.0.1" });
    const address = fastify.server.address();
    return { port: typeof address === "object" && address ? address.port : 0 };
  },

  /** Starts recording call round trips, or stops and returns them. */
  async roundtrips(args: { record: boolean }): Promise<number[]> {
    const done = roundtrips ?? [];
    roundtrips = args.record ? [] : undefined;
    return done;
  },

  async stop(): Promise<null> {
    await app?.close();
    await sql?.end({ timeout: 2 });
    return null;
  },
});

process.on("SIGTERM", () => process.exit(0));
