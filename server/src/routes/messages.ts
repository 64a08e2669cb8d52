import {
  type ActivationResult,
  BrainError,
  PostMessageBodySchema,
  type PostMessageResult,
  resolveCallerDeadline,
} from "@aexhq/brain-contracts";
import { appendRecords, sessionStatus, Touch, turnState, type WriteOp } from "@aexhq/brain-db";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { messagePayload } from "../loop/actor.js";
import type { TurnEnd } from "../loop/turns.js";
import { parseInput } from "../plugins/validate.js";
import type { Services } from "../services.js";
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

/** The answer for an activation_ended record: its status and text, and why it failed. */
function activationResult(sequence: number, end: TurnEnd): ActivationResult {
  const result: ActivationResult = { sequence, status: end.status, text: end.text ?? "" };
  if (end.error) result.error = { code: end.error.code, message: end.error.message };
  return result;
}

/** Resolves with the activation a message started once it has ended; null if the client left. */
async function waitForActivation(
  rt: Pick<Services, "sql" | "bus" | "turns" | "closing">,
  request: FastifyRequest,
  sessionId: string,
  messageSeq: number,
): Promise<ActivationResult | null> {
  return new Promise((resolve, reject) => {
    let done = false;
    let checking = false;
    let again = false;
    const finish = (value: ActivationResult | null, error?: unknown) => {
      if (done) return;
      done = true;
      unsubscribe();
      request.raw.off("close", onClose);
      rt.closing.removeEventListener("abort", onShutdown);
      if (error) reject(error);
      else resolve(value);
    };
    const check = async () => {
      if (checking) {
        again = true;
        return;
      }
      checking = true;
      try {
        do {
          again = false;
          const state = await turnState(rt.sql, sessionId, messageSeq);
          if (!state) return finish(null, new BrainError("not_found", "The session was deleted."));
          if (state.end) return finish(activationResult(state.end.seq, state.end.payload as TurnEnd));
          if (state.status === "ended") return finish({ sequence: state.lastSeq, status: "cancelled", text: "" });
        } while (again && !done);
      } catch (error) {
        finish(null, error);
      } finally {
        checking = false;
      }
    };
    // Subscribe first, then look: an activation that ends in between is not missed. A local actor
    // says so directly; another server's, through NOTIFY and a query.
    const offBus = rt.bus.onSession(sessionId, (bits) => {
      if (bits & (Touch.activationEnded | Touch.ended)) void check();
    });
    const offTurns = rt.turns.on(sessionId, (sequence, end) => {
      if (end.message === messageSeq) finish(activationResult(sequence, end));
    });
    const unsubscribe = () => {
      offBus();
      offTurns();
    };
    const onClose = () => finish(null);
    const onShutdown = () =>
      finish(null, new BrainError("not_ready", "The server is shutting down; the turn goes on."));
    request.raw.on("close", onClose);
    rt.closing.addEventListener("abort", onShutdown, { once: true });
    void check();
  });
}

export async function messageRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.brain;
  app.post("/v1/sessions/:id/messages", async (request, reply) => {
    const { id } = parseInput(SessionParamsSchema, request.params);
    const body = parseInput(PostMessageBodySchema, request.body);
    // The turn's deadline is resolved once, here, and journaled with the message: a restarted or
    // replacement server applies the same absolute time.
    const deadline = resolveCallerDeadline(body);
    const op = appendMessage(rt, id, body.text, deadline);
    const key = idempotencyKey(request.headers);
    const actor = key ? undefined : rt.actors.get(id);
    const fast = actor?.idle ? await actor.takeMessage(body.text, deadline) : null;
    const sequence =
      fast !== null
        ? fast
        : key
          ? await withIdempotency(
              rt,
              `message:${id}`,
              key,
              body,
              op,
              async (seq) => seq,
              async (seq) => seq,
            )
          : await rt.writer.submit(op);
    const activation = body.wait ? await waitForActivation(rt, request, id, sequence) : null;
    const result: PostMessageResult = { sequence, activation };
    return reply.status(201).send(result);
  });
}
