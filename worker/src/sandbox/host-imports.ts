/**
 * brain:tool/host as the component sees it, in its thread. Journal functions cross to the main
 * thread through the bridge and return only once their write committed; `model` returns once the
 * provider answered and the answer was journaled; `telemetry` is one-way and bounded.
 */
import type { Bridge } from "./bridge.js";
import { type HostReply, MAX_DIAGNOSTIC_CHARS } from "./protocol.js";

type WitResult<T> = { tag: "ok"; val: T } | { tag: "err"; val: string };

function toResult<T>(reply: HostReply, value: (seq: number | null, answer?: string) => T): WitResult<T> {
  return reply.ok ? { tag: "ok", val: value(reply.seq, reply.value) } : { tag: "err", val: reply.error };
}

const sequence = (seq: number | null) => BigInt(seq ?? 0);

export function hostImports(bridge: Bridge) {
  return {
    "brain:tool/host": {
      emit: (kind: string, data: string) => toResult(bridge.call({ op: "emit", kind, data }), sequence),
      emitResult: (outcome: string) => toResult(bridge.call({ op: "emit-result", outcome }), sequence),
      returned(): void {
        bridge.call({ op: "returned" });
      },
      finish: (outcome: string | undefined) =>
        toResult(bridge.call({ op: "finish", outcome: outcome ?? null }), () => undefined),
      model: (request: string): WitResult<string> =>
        toResult(bridge.call({ op: "model", request }), (_seq, answer) => answer ?? "null"),
      telemetry(level: string, message: string): void {
        bridge.send({
          type: "telemetry",
          level: level.slice(0, 16),
          message: message.slice(0, MAX_DIAGNOSTIC_CHARS),
        });
      },
    },
  };
}
