import { z } from "zod";
import {
  AckFrameSchema,
  ApprovalFrameSchema,
  AttachFrameSchema,
  CancelFrameSchema,
  EmitFrameSchema,
  EnvironmentFrameSchema,
  FinishFrameSchema,
  InvokeFrameSchema,
  ModelFrameSchema,
  PartFrameSchema,
  PingFrameSchema,
  PongFrameSchema,
  RejectFrameSchema,
  ReleaseFrameSchema,
  ResultFrameSchema,
  ReturnFrameSchema,
  WelcomeFrameSchema,
} from "./frames.js";
import { MAX_JSON_DEPTH } from "./json.js";
import {
  CancelledOutcomeSchema,
  ErrorOutcomeSchema,
  OkOutcomeSchema,
  TimeoutOutcomeSchema,
  ToolErrorSchema,
  UnknownOutcomeSchema,
} from "./outcome.js";

/**
 * The frames as they come off a socket, for the two readers that parse every frame of every call
 * (the SDK's host connection, the server's host sockets). They accept exactly what the published
 * schemas in frames.ts accept, but read a value that `JSON.parse` has just made: its JSON fields
 * (a call's input, a result's value, an emission's data) are JSON by construction, so they are
 * checked in one pass without copying instead of through `z.json()`, which walks them recursively
 * and rebuilds them (about 2 µs and most of a host's allocations per call). The one thing
 * `JSON.parse` yields that is not storable JSON is a number past a double's range, which reads as
 * ±Infinity: that is still refused. `wire-frames.test.ts` holds the two forms to the same answers.
 */

/**
 * Admits a JSON field of a value `JSON.parse` made: false when a number in it is not finite, or
 * when it nests deeper than MAX_JSON_DEPTH (every recursive reader downstream, JSON.stringify and
 * Postgres's jsonb among them, must be able to take what is admitted). Own `__proto__` keys are
 * deleted in place, as the published schemas drop them (their copy assigns each key, and
 * assigning `__proto__` sets a prototype instead of keeping the key). Iterative: depth costs no
 * stack.
 */
export function admitParsedJson(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return typeof value !== "number" || Number.isFinite(value);
  // Two stacks side by side, values and their depths: no pair allocated per value on the hot path.
  const values: unknown[] = [value];
  const depths: number[] = [0];
  const push = (item: unknown, depth: number) => {
    if (typeof item !== "object" && typeof item !== "number") return;
    values.push(item);
    depths.push(depth);
  };
  while (values.length > 0) {
    const v = values.pop();
    const depth = depths.pop()!;
    if (typeof v === "number") {
      if (!Number.isFinite(v)) return false;
      continue;
    }
    if (typeof v !== "object" || v === null) continue;
    if (depth >= MAX_JSON_DEPTH) return false;
    if (Array.isArray(v)) {
      for (const item of v) push(item, depth + 1);
      continue;
    }
    const record = v as Record<string, unknown>;
    if (Object.hasOwn(record, "__proto__")) Reflect.deleteProperty(record, "__proto__");
    for (const key in record) push(record[key], depth + 1);
  }
  return true;
}

type Json = z.infer<ReturnType<typeof z.json>>;

/** A JSON field of a parsed frame: passed through as it is, once its numbers are known finite. */
const ParsedJson = z.custom<Json>(admitParsedJson, {
  message: `Invalid JSON: numbers must be finite, and values nested at most ${MAX_JSON_DEPTH} levels deep`,
});

const WireOutcomeSchema = z.discriminatedUnion("status", [
  OkOutcomeSchema.extend({ value: ParsedJson }),
  ErrorOutcomeSchema.extend({ error: ToolErrorSchema.extend({ details: ParsedJson.optional() }) }),
  TimeoutOutcomeSchema,
  CancelledOutcomeSchema,
  UnknownOutcomeSchema,
]);

/** What a host sends, as the server reads it off the socket (HostFrameSchema's answers). */
export const WireHostFrameSchema = z.discriminatedUnion("type", [
  EmitFrameSchema.extend({ data: ParsedJson }),
  ResultFrameSchema.extend({ outcome: WireOutcomeSchema }),
  ReturnFrameSchema.extend({ outcome: WireOutcomeSchema.optional() }),
  FinishFrameSchema.extend({ outcome: WireOutcomeSchema.optional() }),
  ApprovalFrameSchema,
  PingFrameSchema,
  ModelFrameSchema.extend({ request: ParsedJson }),
  EnvironmentFrameSchema.extend({ params: ParsedJson.optional() }),
  PartFrameSchema,
  AttachFrameSchema,
]);

/** What the server sends, as the SDK reads it off the socket (ServerFrameSchema's answers). */
export const WireServerFrameSchema = z.discriminatedUnion("type", [
  WelcomeFrameSchema,
  InvokeFrameSchema.extend({ input: ParsedJson }),
  AckFrameSchema.extend({ value: ParsedJson.optional() }),
  RejectFrameSchema,
  CancelFrameSchema,
  ReleaseFrameSchema,
  PongFrameSchema,
]);
