/**
 * What a commit touched, as keys only: the wake-up path carries these (locally, and in NOTIFY
 * payloads to other processes) and readers fetch the data themselves.
 */

/** Bits describing what a commit appended to one session. */
export const Touch = {
  /** A user message: wakes the Agentloop at once. */
  message: 1,
  /** A tool observation (result, return, terminal outcome): wakes the Agentloop through the 5 ms window. */
  observation: 2,
  /** The Agentloop's own records (activation, model call, tool call started). */
  loop: 4,
  /** An activation ended: wakes requests waiting for a turn's answer. */
  activationEnded: 8,
  /** The session ended or was deleted. */
  ended: 16,
  /** Extension events and anything else: only event-stream readers care. */
  other: 32,
} as const;

export interface CommitKeys {
  /** session id -> OR of Touch bits */
  sessions: Map<string, number>;
  /** hosts with work to pick up: pending calls to claim, or cancellations to deliver. */
  hosts: Set<string>;
  /** Sessions that ended or were deleted, with their host: whichever server holds its connections tells it. */
  releases: Map<string, string>;
}

export function emptyKeys(): CommitKeys {
  return { sessions: new Map(), hosts: new Set(), releases: new Map() };
}

export function mergeKeys(into: CommitKeys, from: CommitKeys): void {
  for (const [id, bits] of from.sessions) into.sessions.set(id, (into.sessions.get(id) ?? 0) | bits);
  for (const h of from.hosts) into.hosts.add(h);
  for (const [s, h] of from.releases) into.releases.set(s, h);
}

export function touchOf(kind: string): number {
  switch (kind) {
    case "user_message":
    case "cancel_requested":
      return Touch.message;
    case "tool_result":
    case "tool_returned":
    case "tool_call_ended":
      return Touch.observation;
    case "activation_ended":
      return Touch.activationEnded | Touch.loop;
    case "session_ended":
      return Touch.ended;
    case "activation_started":
    case "model_call_started":
    case "model_call_ended":
    case "assistant_message":
    case "tool_call_started":
      return Touch.loop;
    default:
      return Touch.other;
  }
}

/** NOTIFY payloads must stay under 8000 bytes; keys are split across as many as needed. */
const MAX_PAYLOAD = 7800;

export interface WirePayload {
  /** Origin process, so it can skip its own notifications (it delivered them locally). */
  o: string;
  s: [string, number][];
  h: string[];
  /** Released sessions and their hosts (absent in payloads of older versions). */
  r?: [string, string][];
}

export function encodeKeys(origin: string, keys: CommitKeys): string[] {
  const out: string[] = [];
  let cur: WirePayload = { o: origin, s: [], h: [], r: [] };
  let size = 64;
  const push = () => {
    out.push(JSON.stringify(cur));
    cur = { o: origin, s: [], h: [], r: [] };
    size = 64;
  };
  for (const [id, bits] of keys.sessions) {
    if (size + 48 > MAX_PAYLOAD) push();
    cur.s.push([id, bits]);
    size += 48;
  }
  for (const h of keys.hosts) {
    if (size + 40 > MAX_PAYLOAD) push();
    cur.h.push(h);
    size += 40;
  }
  for (const pair of keys.releases) {
    if (size + 84 > MAX_PAYLOAD) push();
    cur.r!.push(pair);
    size += 84;
  }
  if (cur.s.length > 0 || cur.h.length > 0 || cur.r!.length > 0) push();
  return out;
}

/**
 * How every payload encodeKeys makes for `origin` begins. A process hears each of its own commits
 * back through LISTEN after delivering them in-process: the prefix lets it drop them unparsed.
 */
export function originPrefix(origin: string): string {
  return `{"o":${JSON.stringify(origin)},`;
}

export function decodeKeys(payload: string): { origin: string; keys: CommitKeys } | null {
  try {
    const p = JSON.parse(payload) as WirePayload;
    if (typeof p.o !== "string" || !Array.isArray(p.s) || !Array.isArray(p.h)) return null;
    const keys = emptyKeys();
    for (const [id, bits] of p.s) if (typeof id === "string" && typeof bits === "number") keys.sessions.set(id, bits);
    for (const h of p.h) if (typeof h === "string") keys.hosts.add(h);
    for (const pair of Array.isArray(p.r) ? p.r : []) {
      if (Array.isArray(pair) && typeof pair[0] === "string" && typeof pair[1] === "string") {
        keys.releases.set(pair[0], pair[1]);
      }
    }
    return { origin: p.o, keys };
  } catch {
    return null;
  }
}
