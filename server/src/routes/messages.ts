import {
  type ActivationResult,
  BrainError,
  PostMessageBodySchema,
  type PostMessageResult,
  resolveCallerDeadline,
} from "@aexhq/brain-contracts";
import { Touch } from "@aexhq/brain-db/commits";
import { appendRecords, sessionStatus, turnState } from "@aexhq/brain-db/ops";
import type { WriteOp } from "@aexhq/brain-db/writer";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { messagePayload } from "../loop/actor.js";
import type { TurnEnd } from "../loop/turns.js";
import { parseInput } from "../plugins/validate.js";
import type { Runtime } from "../runtime.js";
import type { Services } from "../services.js";
import { waitOnSession } from "../session-wait.js";
import { withIdempotency } from "./idempotent.js";
import { idempotencyKey, SessionParamsSchema } from "./params.js";

/** A user_message append that fails loudly when the session is missing or ended. */
function appendMessage(
  rt: Pick<Services, "sql">,
  sessionId: string,
  text: string,
  deadline: number | null,
): WriteOp<number> {
  const op = appendRecords(sessionId, [{ kind: "user_message", payload: messagePayload(text, deadline) }]);
  return {
    // Its only follow-up (explaining a refusal) reads through the pool, not the transaction.
    notify: op.notify,
    keys: (seq) => op.keys({ records: seq > 0 ? [{ seq, kind: "user_message", createdAt: new Date() }] : [] }),
    run: (tx) =>
      op.run(tx).then(async (r) => {
        const first = r.records[0];
        if (first) return first.seq;
        throw new BrainError((await sessionStatus(rt.sql, sessionId)) ? "session_ended" : "not_found");
      }),
  };
}

/**
 * Journals a user message and answers its sequence: under `key`, once per key and `body` (see
 * withIdempotency); without one, handed straight to the session's Agentloop when it is idle here.
 */
export async function journalMessage(
  rt: Pick<Runtime, "sql" | "writer" | "actors">,
  sessionId: string,
  message: { text: string; deadline: number | null },
  key: string | undefined,
  body: unknown,
): Promise<number> {
  const op = appendMessage(rt, sessionId, message.text, message.deadline);
  if (key)
    return withIdempotency(
      rt,
      `message:${sessionId}`,
      key,
      body,
      op,
      async (s) => s,
      async (s) => s,
    );
  const actor = rt.actors.get(sessionId);
  const fast = actor?.idle ? await actor.takeMessage(message.text, message.deadline) : null;
  return fast ?? (await rt.writer.submit(op));
}

/** The answer for an activation_ended record: its status and text, and why it failed. */
function activationResult(sequence: number, end: TurnEnd): ActivationResult {
  const result: ActivationResult = { sequence, status: end.status, text: end.text ?? "" };
  if (end.error) {
    const { code, message, details } = end.error;
    result.error = details ? { code, message, details } : { code, message };
  }
  return result;
}

/** How a request waits for its message's activation. */
interface WaitSpec {
  /** This request appended the message just now: its activation cannot have ended yet. */
  fresh: boolean;
  /** Give up (null) after this long; undefined: until it ends. */
  withinMs?: number | undefined;
}

/**
 * Resolves with the activation a message started once it has ended; null if the client left or
 * the bounded wait ran out.
 */
async function waitForActivation(
  rt: Pick<Services, "sql" | "bus" | "turns" | "closing">,
  request: FastifyRequest,
  sessionId: string,
  messageSeq: number,
  spec: WaitSpec,
): Promise<ActivationResult | null> {
  return waitOnSession<ActivationResult | null>(rt, {
    sessionId,
    wakeOn: Touch.activationEnded | Touch.ended,
    // Another server's actor is heard through NOTIFY and a query; this process's says so directly.
    deferLook: true,
    // A message this request has just appended: nothing can have answered it yet (the commit's
    // acknowledgement and this subscription happen without any I/O in between), so no query.
    lookFirst: !spec.fresh,
    look: async () => {
      const state = await turnState(rt.sql, sessionId, messageSeq);
      if (!state) throw new BrainError("not_found", "The session was deleted.");
      if (state.end) return activationResult(state.end.seq, state.end.payload);
      if (state.status === "ended") return { sequence: state.lastSeq, status: "cancelled", text: "" };
      if (!state.messageKept) {
        throw new BrainError(
          "database_unavailable",
          "The database lost this message after acknowledging it (it failed over to a standby that never received it): send it again.",
        );
      }
      return undefined;
    },
    shutdown: () => new BrainError("not_ready", "The server is shutting down; the turn goes on."),
    also: (settle) => {
      const offTurns = rt.turns.on(sessionId, (sequence, end) => {
        if (end.message === messageSeq) settle(activationResult(sequence, end));
      });
      // The client left, or the bounded wait ran out: null.
      const onClose = () => settle(null);
      request.raw.on("close", onClose);
      const timer = spec.withinMs === undefined ? undefined : setTimeout(onClose, spec.withinMs);
      return () => {
        offTurns();
        request.raw.off("close", onClose);
        clearTimeout(timer);
      };
    },
  });
}

/**
 * The bounded wait (`waitMs`): the status line and the message's sequence leave at once, in the
 * headers (with one byte of JSON whitespace, which sends them); the answer follows when the
 * activation ends or the wait runs out. Whatever happens after the headers, the body is the
 * ordinary answer with `activation` null: the client follows the event stream from there. Written
 * to the response itself (the reply is hijacked): a stream piped through the reply cost this
 * route more CPU than its own work, on every turn the SDK sends.
 */
function answerBounded(
  rt: Pick<Services, "sql" | "bus" | "turns" | "closing">,
  request: FastifyRequest,
  reply: FastifyReply,
  sessionId: string,
  sequence: number,
  spec: WaitSpec,
) {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(201, { "content-type": "application/json; charset=utf-8", "brain-sequence": String(sequence) });
  res.write(" ");
  const answer = (activation: ActivationResult | null) => {
    const result: PostMessageResult = { sequence, activation };
    if (!res.writableEnded && !res.destroyed) res.end(JSON.stringify(result));
  };
  waitForActivation(rt, request, sessionId, sequence, spec).then(answer, () => answer(null));
  return reply;
}

export async function messageRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.brain;
  app.post("/v1/sessions/:id/messages", async (request, reply) => {
    const { id } = parseInput(SessionParamsSchema, request.params);
    const body = parseInput(PostMessageBodySchema, request.body);
    // The turn's deadline is resolved once, here, and journaled with the message: a restarted or
    // replacement server applies the same absolute time.
    const deadline = resolveCallerDeadline(body);
    const key = idempotencyKey(request.headers);
    const sequence = await journalMessage(rt, id, { text: body.text, deadline }, key, body);
    const fresh = !key;
    if (body.waitMs !== undefined) {
      return answerBounded(rt, request, reply, id, sequence, { fresh, withinMs: body.waitMs });
    }
    const activation = body.wait ? await waitForActivation(rt, request, id, sequence, { fresh }) : null;
    const result: PostMessageResult = { sequence, activation };
    return reply.status(201).send(result);
  });
}
