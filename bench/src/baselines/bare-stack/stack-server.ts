import { corkPerTick } from "@aexhq/brain-contracts";
import websocket from "@fastify/websocket";
import Fastify, { type FastifyInstance } from "fastify";
import postgres from "postgres";
import type { WebSocket } from "ws";
import { calibrateWallClock, wallNow } from "../../measure/clock.js";
import { serve } from "../../runner/rpc.js";
import { bareJournal, brainJournal, type StackJournal } from "./stack-journal.js";
import { type Frame, STACK_APPLICATION, type StackServerArgs, type TurnBody } from "./stack-protocol.js";

/**
 * The bare stack (floor_stack): Fastify, @fastify/websocket and postgres.js, as Brain's server
 * uses them, doing only what any durable tool runtime must do for a turn, with none of Brain's
 * own logic (no validation beyond JSON, no budgets, no call rows, no Agentloop, no recovery).
 *
 * - What a turn commits, a journal (stack-journal.ts) writes: by default every record a row in a
 *   group commit; with `journal: "brain"` (floor_stack_journal) Brain's own journal statements.
 * - A turn (`POST /turn/:id`): the user message commits; each round commits the model's answer with
 *   its calls' intents before any invoke frame leaves (at most once), each result commits before
 *   its ack; the final answer commits before the HTTP answer.
 * - An emit frame commits one record before its ack.
 */

let sql: postgres.Sql | undefined;
let journal: StackJournal | undefined;
let app: FastifyInstance | undefined;

serve({
  async start(args: StackServerArgs): Promise<{ port: number }> {
    calibrateWallClock();
    if (args.journal === "brain") journal = await brainJournal(args.url, STACK_APPLICATION.brain);
    else {
      sql = postgres(args.url, {
        max: 2,
        onnotice: () => {},
        connection: { application_name: STACK_APPLICATION.bare },
      });
      journal = await bareJournal(sql, args.channel);
    }
    const j = journal;
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
          j.emit(frame.s, frame.data).then(() => send({ t: "ack", s: frame.s, q: frame.q }));
        }
      });
    });
    fastify.post<{ Params: { id: string }; Body: TurnBody }>("/turn/:id", async (request) => {
      const id = request.params.id;
      await j.message(id, request.body.text);
      for (const [r, calls] of request.body.rounds.entries()) {
        // As tool_dispatch reads created_at: the moment the intents leave for their commit.
        const at = wallNow();
        const intents = await j.answer(id, r, calls);
        await Promise.all(
          intents.map(
            (intent) =>
              new Promise<void>((resolve, reject) => {
                awaiting.set(`${id}:${intent.seq}`, (output) => {
                  awaiting.delete(`${id}:${intent.seq}`);
                  j.result(id, intent.seq, output).then(() => {
                    send({ t: "ack", s: id, q: intent.seq });
                    resolve();
                  }, reject);
                });
                send({ t: "invoke", s: id, q: intent.seq, input: intent.input, at });
              }),
          ),
        );
        await j.next(id);
      }
      await j.final(id);
      return { text: "done" };
    });
    await fastify.listen({ port: 0, host: "127.0.0.1" });
    const address = fastify.server.address();
    return { port: typeof address === "object" && address ? address.port : 0 };
  },

  async stop(): Promise<null> {
    await app?.close();
    await journal?.close();
    await sql?.end({ timeout: 2 });
    return null;
  },
});

process.on("SIGTERM", () => process.exit(0));
