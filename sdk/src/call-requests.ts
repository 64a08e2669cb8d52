import type { EnvironmentControl } from "./context.js";
import {
  BrainError,
  type EnvironmentOperation,
  type EnvironmentView,
  isErrorCode,
  type ModelRequest,
  type ModelResult,
  ModelResultSchema,
} from "./contracts.js";
import type { RequestFrame } from "./frame-encoding.js";
import type { Ack } from "./pending-acks.js";

/** Sends one request frame for the open call; rejects (execution_finished) once it has ended. */
export type CallRequester = (frame: RequestFrame) => Promise<Ack>;

/** ctx.model: the answer is checked against the ModelResult schema before the handler sees it. */
export async function requestModel(
  send: CallRequester,
  call: { sessionId: string; sequence: number },
  request: ModelRequest,
): Promise<ModelResult> {
  const ack = await send({ type: "model", ...call, request: request as never });
  const parsed = ModelResultSchema.safeParse(ack.value);
  if (!parsed.success) throw new BrainError("request_failed", "Brain answered a model call with a malformed result.");
  return parsed.data;
}

/** ctx.environments for one call: each operation is one `environment` frame. */
export function environmentControl(
  send: CallRequester,
  call: { sessionId: string; sequence: number },
): EnvironmentControl {
  const op = async (operation: EnvironmentOperation, name?: string, params?: unknown): Promise<unknown> => {
    const frame: RequestFrame = { type: "environment", ...call, operation };
    if (name !== undefined) frame.name = name;
    if (params !== undefined) frame.params = params as never;
    return (await send(frame)).value;
  };
  return Object.freeze({
    list: async () => (await op("list")) as EnvironmentView[],
    get: async (name: string) => (await op("get", name)) as EnvironmentView,
    create: async (spec: { name: string }) => {
      const { name, ...config } = spec;
      return (await op("create", name, { type: "http", ...config })) as EnvironmentView;
    },
    update: async (name: string, patch: object) => (await op("update", name, patch)) as EnvironmentView,
    setup: async (name: string) => (await op("setup", name)) as EnvironmentView,
    delete: async (name: string) => {
      await op("delete", name);
    },
    call: async (name: string, invocation: { descriptor: unknown; input?: unknown }) => {
      const outcome = (await op("call", name, invocation)) as {
        status: string;
        value?: unknown;
        error?: { code: string; message: string; details?: unknown };
      };
      if (outcome?.status === "ok") return outcome.value;
      const e = outcome?.error;
      const code = e && isErrorCode(e.code) ? e.code : "request_failed";
      throw new BrainError(code, e?.message ?? `The environment call ended ${outcome?.status}.`, e?.details ?? outcome);
    },
  }) as EnvironmentControl;
}
