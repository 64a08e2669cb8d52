import { type BrainRecordKind, RECORD_PAYLOADS } from "./records.js";

/**
 * Glossary (the words every module uses):
 * - session: one agent conversation; its journal is an ordered record stream (session_id, seq).
 * - journal: the durable, append-only record of a session; `seq` is dense per session from 1.
 * - sequence: a record's `seq`. A tool call is named by (session id, seq of its tool_call_started).
 * - activation: one run of the Agentloop, started by a user message or by later tool observations.
 * - host: an application process connected over WebSocket that runs `run` tools.
 * - environment: where a tool runs (a host, Brain's own worker, an HTTP service); a binding has a name.
 * - placement: a tool configured by its factory (parsed, frozen options) and bound to an environment.
 * - outcome: a result envelope: ok | error | timeout | cancelled | unknown.
 * - observation: a committed record the Agentloop may react to (results, returns, terminal outcomes).
 */

/** The journal's own record kinds (one schema each: records.ts). `ctx.emit` refuses them. */
export const RECORD_KINDS: readonly BrainRecordKind[] = Object.keys(RECORD_PAYLOADS) as BrainRecordKind[];

export type RecordKind = BrainRecordKind;

const reserved = new Set<string>(RECORD_KINDS);
export function isReservedKind(kind: string): boolean {
  return reserved.has(kind) || kind.startsWith("brain.");
}

/** Extension event kinds: short, lower-case, safe to print and to index. */
export const EVENT_KIND_PATTERN = /^[a-z][a-z0-9_.:-]{0,63}$/;

/** Tool names as the model sees them (the common denominator of provider rules). */
export const TOOL_NAME_PATTERN = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;
