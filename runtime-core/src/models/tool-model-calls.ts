import {
  armAt,
  BrainError,
  byteLength,
  findUnstorable,
  MAX_BODY_BYTES,
  type ModelConfig,
  type ModelRequest,
  ModelRequestSchema,
  type ModelResult,
  UNSTORABLE_TEXT,
} from "@aexhq/brain-contracts";
import type { Sql } from "@aexhq/brain-db/connect";
import { type CallRef, endedAmong, endToolModelCall, startToolModelCall } from "@aexhq/brain-db/ops";
import type { SecretBox } from "@aexhq/brain-db/secrets";
import type { JournalWriter } from "@aexhq/brain-db/writer";
import { loadModelConfig } from "./credentials.js";
import { createProvider } from "./provider.js";
import {
  type ModelAttempt,
  ModelCallError,
  type ProviderRequest,
  type ProviderResponse,
  type ProviderTransport,
  recordedResponse,
} from "./types.js";

/**
 * Model calls on behalf of tool calls: `ctx.model` over a host connection (server) and the WIT
 * `model` import of components (worker). Each charges the originating activation's model-call
 * budget, is journaled with the tool call as its origin before the provider is asked, and has its
 * outcome and usage journaled before the answer returns. The tool call's end (finish, cancel,
 * loss), its deadline and a process that stops interrupt a pending request. The provider may
 * already have acted on it (and billed it), so an interrupted request ends `unknown`, never
 * `cancelled`, with what stopped it as its cause; it is never replayed.
 */
export interface ToolModelCallsDeps {
  sql: Sql;
  writer: JournalWriter;
  secrets: SecretBox;
  /** This process's id in `servers`: the runner journaled with each request in flight. */
  runnerId(): string;
  maxModelCalls: number;
  /** How providers reach the network (the egress guard's fetch, the answer cap). */
  transport: ProviderTransport;
}

/** Requests up to this size are journaled whole with model_call_started; larger ones summarised. */
const MAX_JOURNALED_REQUEST_BYTES = 64 * 1024;

type StopReason = "call_ended" | "deadline" | "shutdown";

class Stop extends Error {
  constructor(readonly reason: StopReason) {
    super(`the model request was stopped: ${reason}`);
  }
}

interface InFlight {
  sessionId: string;
  callSeq: number;
  controller: AbortController;
}

export interface ToolModelAnswer {
  /** The model_call_ended record. */
  sequence: number;
  value: ModelResult;
}

export class ToolModelCalls {
  private readonly inflight = new Set<InFlight>();

  constructor(private readonly deps: ToolModelCallsDeps) {}

  async call(ref: CallRef, raw: unknown): Promise<ToolModelAnswer> {
    const request = validRequest(raw);
    const config = await this.modelConfig(ref.sessionId);
    const origin = { type: "tool", sessionId: ref.sessionId, sequence: ref.seq };
    const { deps } = this;
    const started = await deps.writer.submit(
      startToolModelCall(
        ref,
        { origin, request: journaledRequest(request) },
        deps.runnerId(),
        deps.maxModelCalls,
        config.provider === "scripted",
      ),
    );
    if (started.seq === null) {
      if (started.overBudget) {
        throw new BrainError(
          "model_budget_exceeded",
          `The activation has used its ${deps.maxModelCalls} model calls (BRAIN_MAX_MODEL_CALLS).`,
        );
      }
      throw new BrainError("call_ended", "The tool call is not open (ended, not dispatched to you, or unknown).");
    }
    const startSeq = started.seq;
    const flight: InFlight = { sessionId: ref.sessionId, callSeq: ref.seq, controller: new AbortController() };
    this.inflight.add(flight);
    const disarm = started.deadline === null ? () => {} : armAt(started.deadline, () => stop(flight, "deadline"));
    const attempts: ModelAttempt[] = [];
    // A retried call's attempts go with whatever it ends with (retry.ts).
    const end = (payload: Record<string, unknown>) =>
      deps.writer.submit(
        endToolModelCall(ref.sessionId, startSeq, {
          call: startSeq,
          origin,
          ...payload,
          ...(attempts.length > 1 ? { attempts } : {}),
        }),
      );
    try {
      let response: ProviderResponse;
      try {
        response = await createProvider(config, this.deps.transport).complete(providerRequest(request), {
          signal: flight.controller.signal,
          index: started.index,
          origin: "tool",
          attempts,
          deadline: started.deadline,
        });
      } catch (error) {
        throw await this.failed(error, flight, end);
      }
      const seq = await end({
        outcome: { status: "ok" },
        response: recordedResponse(response),
        model: response.model,
        usage: response.usage,
      });
      // Recorded `unknown` by a recovery sweep meanwhile: an answer the journal does not hold is
      // never handed out.
      if (seq === null) throw new BrainError("model_call_stopped", "The model call was recorded as interrupted.");
      const value: ModelResult = {
        text: response.text,
        toolCalls: response.toolCalls,
        stopReason: response.stopReason,
        usage: response.usage,
        model: response.model,
        ...(response.reasoning ? { reasoning: response.reasoning } : {}),
        sequence: seq,
      };
      return { sequence: seq, value };
    } finally {
      disarm();
      this.inflight.delete(flight);
    }
  }

  /** Stops the requests of tool calls that have ended (all sessions, or the ones a commit touched). */
  async stopEnded(sessions?: readonly string[]): Promise<void> {
    const wanted = sessions ? new Set(sessions) : null;
    const candidates = [...this.inflight].filter((f) => !wanted || wanted.has(f.sessionId));
    if (candidates.length === 0) return;
    const ended = await endedAmong(
      this.deps.sql,
      candidates.map((f) => ({ sessionId: f.sessionId, seq: f.callSeq })),
    );
    const keys = new Set(ended.map((e) => `${e.sessionId}:${e.seq}`));
    for (const f of candidates) if (keys.has(`${f.sessionId}:${f.callSeq}`)) stop(f, "call_ended");
  }

  /** This process is stopping: every request in flight is interrupted (journaled `unknown`). */
  async stopAll(timeoutMs = 2000): Promise<void> {
    for (const f of this.inflight) stop(f, "shutdown");
    const until = Date.now() + timeoutMs;
    while (this.inflight.size > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  }

  private async modelConfig(sessionId: string): Promise<ModelConfig> {
    const config = await loadModelConfig(this.deps.sql, this.deps.secrets, sessionId);
    if (!config) throw new BrainError("call_not_found", "No such session.");
    return config;
  }

  /** Journals how a request failed or was stopped, and says so to the tool. */
  private async failed(
    error: unknown,
    flight: InFlight,
    end: (payload: Record<string, unknown>) => Promise<number | null>,
  ): Promise<BrainError> {
    const reason = flight.controller.signal.aborted ? (flight.controller.signal.reason as Stop).reason : null;
    if (reason) {
      // Aborting our side of the exchange says nothing about the provider's: the outcome is unknown.
      await end({ outcome: { status: "unknown", cause: reason } });
      return new BrainError("model_call_stopped", `The model request was stopped: ${reason}.`, { cause: reason });
    }
    const code = error instanceof ModelCallError ? error.code : "model_error";
    const message = error instanceof Error ? error.message : String(error);
    const details = error instanceof ModelCallError ? error.context : undefined;
    await end({ outcome: { status: "error", error: { code, message, ...(details ? { details } : {}) } } });
    return new BrainError(code, message, details);
  }
}

function stop(flight: InFlight, reason: StopReason): void {
  if (!flight.controller.signal.aborted) flight.controller.abort(new Stop(reason));
}

function journaledRequest(request: ModelRequest): unknown {
  const bytes = byteLength(JSON.stringify(request));
  if (bytes <= MAX_JOURNALED_REQUEST_BYTES) return request;
  return { truncated: true, bytes, messages: request.messages.length, tools: (request.tools ?? []).map((t) => t.name) };
}

/** The request as a tool sent it, bounded and validated before anything is written. */
function validRequest(raw: unknown): ModelRequest {
  // Whatever path it came by (a 64 KiB frame, a 1 MiB body, a component's string), one bound.
  const bytes = byteLength(JSON.stringify(raw) ?? "");
  if (bytes > MAX_BODY_BYTES) {
    throw new BrainError(
      "invalid_model_request",
      `The ModelRequest is ${bytes} bytes; the limit is ${MAX_BODY_BYTES}.`,
    );
  }
  const parsed = ModelRequestSchema.safeParse(raw);
  if (!parsed.success) {
    throw new BrainError("invalid_model_request", "The ModelRequest failed validation.", parsed.error.issues);
  }
  const request = parsed.data;
  // Journaled with model_call_started: text Postgres cannot store is refused before any write.
  const where = findUnstorable(request, "$.request");
  if (where !== null) {
    throw new BrainError("invalid_model_request", `The ModelRequest contains ${UNSTORABLE_TEXT} at ${where}.`);
  }
  return request;
}

/** What the provider is asked: the tool's request, with nothing defaulted. */
function providerRequest(request: ModelRequest): ProviderRequest {
  return {
    ...(request.system ? { system: request.system } : {}),
    messages: request.messages,
    tools: request.tools ?? [],
    ...(request.responseFormat ? { responseFormat: request.responseFormat } : {}),
    ...(request.maxTokens ? { maxTokens: request.maxTokens } : {}),
  };
}
