import type { AddressInfo } from "node:net";
import { BrainError, CallFrameBodySchema, ERROR_CODES } from "@aexhq/brain-contracts";
import { modelGranted, setServerUrl } from "@aexhq/brain-db/ops";
import { type CallbackRoute, type SecretBox, verifyCallbackToken } from "@aexhq/brain-db/secrets";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { Config } from "../config.js";
import { applyReport, refuseOversizeResult, toAction } from "../hosts/call-reports.js";
import { resultBytesLimit } from "../hosts/frame-parts.js";
import { bearer } from "../plugins/auth.js";
import { observeRequestError, toBrainError } from "../plugins/errors.js";
import { parseInput } from "../plugins/validate.js";
import type { Services } from "../services.js";

const CallParamsSchema = z.strictObject({
  sessionId: z.uuid(),
  sequence: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER),
});

/**
 * Callbacks of tools served over HTTP (the Application tool extension): the application reports
 * on the call it was invoked for, with the call-scoped token the worker gave it rather than the
 * operator token. Frames get the rules of a host's result / finish frames (conditional transition,
 * budget, emission_rejected); the answer comes after the commit, so it is the durable
 * acknowledgment. Each server announces where it can be reached once it listens, so workers can
 * hand out a callback URL.
 */
export async function callCallbackRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.brain;
  /** The worker connection each authenticated request's token names. */
  const verified = new WeakMap<FastifyRequest, string>();

  app.addHook("onListen", async function () {
    const addresses = this.addresses().filter((a): a is AddressInfo => typeof a === "object");
    await setServerUrl(rt.sql, rt.serverId, callbackBaseUrl(rt.config, addresses));
  });

  const authenticate = callTokenCheck(rt.secrets, "frames", verified);
  app.post(
    "/v1/calls/:sessionId/:sequence/frames",
    {
      // Results have no limit of their own, only the budget: a body past it ends the call.
      bodyLimit: resultBytesLimit(rt.config.maxEmittedBytes),
      onRequest: authenticate,
      errorHandler: (error: FastifyError, request, reply) => answerRefusal(rt, verified, error, request, reply),
    },
    async (request) => {
      const { sessionId, sequence } = parseInput(CallParamsSchema, request.params);
      const report = parseInput(CallFrameBodySchema, request.body);
      const connectionId = verified.get(request)!;
      const result = await applyReport(rt, { sessionId, seq: sequence, connectionId }, toAction(report));
      // The token is Brain's own, so the call exists (or existed): it is no longer open.
      if (result.seq === null) throw new BrainError("call_ended");
      return { sequence: result.seq };
    },
  );
}

/**
 * A callback body past anything the budget admits ends its call `budget_exceeded` (as a host's
 * oversize result does), so the call does not wait for its deadline; other errors as everywhere.
 */
async function answerRefusal(
  rt: Pick<Services, "writer" | "config" | "availability">,
  verified: WeakMap<FastifyRequest, string>,
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  let answer: unknown = error;
  const connectionId = verified.get(request);
  if (toBrainError(error).code === "body_too_large" && connectionId !== undefined) {
    const { sessionId, sequence } = parseInput(CallParamsSchema, request.params);
    const bytes = Number(request.headers["content-length"]) || resultBytesLimit(rt.config.maxEmittedBytes) + 1;
    try {
      await refuseOversizeResult(rt, { sessionId, seq: sequence, connectionId }, bytes);
      answer = new BrainError("call_ended");
    } catch (refused) {
      answer = refused;
    }
  }
  observeRequestError(rt.availability, request, answer);
  const brain = toBrainError(answer);
  if (brain.code === "internal_error") request.log.error({ err: answer }, "unhandled error");
  await reply.status(brain.httpStatus).send({ error: brain.toJSON() });
}

/**
 * The granted model execution service: the service behind an HTTP Environment that grants `model`
 * calls the session's model for the call it is running (a ModelRequest in, the ModelResult out),
 * exactly as ctx.model does: the activation's budget, the journal, stopped when the call ends.
 */
export async function callModelRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.brain;
  const verified = new WeakMap<FastifyRequest, string>();
  app.post(
    "/v1/calls/:sessionId/:sequence/model",
    { onRequest: callTokenCheck(rt.secrets, "model", verified) },
    async (request, reply) => {
      const { sessionId, sequence } = parseInput(CallParamsSchema, request.params);
      if (!(await modelGranted(rt.sql, sessionId, sequence))) throw new BrainError("model_not_granted");
      try {
        const answer = await rt.toolModels.call(
          { sessionId, seq: sequence, connectionId: verified.get(request)! },
          request.body,
        );
        return answer.value;
      } catch (error) {
        // A provider failure is the model's answer, not this request's fault: 502 with its code.
        if (error instanceof BrainError && ERROR_CODES[error.code].scope === "outcome") {
          return reply.status(error.code === "model_call_stopped" ? 409 : 502).send({ error: error.toJSON() });
        }
        throw error;
      }
    },
  );
}

/**
 * The onRequest check of the call-scoped routes, before the body is read: a request without this
 * call's unexpired token for this route (as a bearer token or `brain-call-token`) learns nothing.
 * It remembers the worker connection the token names.
 */
function callTokenCheck(secrets: SecretBox, route: CallbackRoute, verified: WeakMap<FastifyRequest, string>) {
  return async (request: FastifyRequest) => {
    const params = CallParamsSchema.safeParse(request.params);
    const token = params.success ? (bearer(request) ?? request.headers["brain-call-token"]) : null;
    const connectionId =
      params.success && typeof token === "string"
        ? verifyCallbackToken(secrets, token, route, { sessionId: params.data.sessionId, seq: params.data.sequence })
        : null;
    if (connectionId === null) throw new BrainError("unauthorized", "Missing or invalid call token.");
    verified.set(request, connectionId);
  };
}

/** BRAIN_PUBLIC_URL, else the address the server listens on (a wildcard as its loopback). */
export function callbackBaseUrl(config: Pick<Config, "publicUrl">, addresses: AddressInfo[]): string {
  if (config.publicUrl) return config.publicUrl.replace(/\/+$/, "");
  const a = addresses.find((x) => x.family === "IPv4") ?? addresses[0];
  if (!a) throw new Error("the server listens on no address");
  const host = a.address === "0.0.0.0" ? "127.0.0.1" : a.address === "::" ? "::1" : a.address;
  return `http://${a.family === "IPv6" ? `[${host}]` : host}:${a.port}`;
}
