import { z } from "zod";

/**
 * Caller-owned deadlines. A session (at creation) and a turn (its message) may bound the tool
 * calls they make: `deadline` is an absolute time in epoch ms, `timeoutMs` a duration from when
 * Brain accepts the request (so the caller's clock does not matter); with both, the earlier wins.
 * Nothing here bounds a call unless someone set it: a tool without `timeoutMs`, in a session and
 * turn without a deadline, on a server without BRAIN_MAX_TOOL_SECS, runs unlimited.
 */

/** The latest deadline Brain stores (9999-12-31T23:59:59.999Z): far enough, and every clock and column holds it. */
export const MAX_DEADLINE_MS = 253_402_300_799_999;

export const CallerDeadlineFields = {
  /** Absolute deadline (epoch ms) for the tool calls this request leads to. */
  deadline: z.number().int().min(0).max(MAX_DEADLINE_MS).optional(),
  /** The same as a duration in ms, counted from when Brain accepts the request. */
  timeoutMs: z.number().int().min(1).max(MAX_DEADLINE_MS).optional(),
};

export interface CallerDeadline {
  deadline?: number | undefined;
  timeoutMs?: number | undefined;
}

/** The earliest of some deadlines (epoch ms); null when none is set. */
export function earliestDeadline(...deadlines: (number | null | undefined)[]): number | null {
  let out: number | null = null;
  for (const d of deadlines) if (typeof d === "number" && (out === null || d < out)) out = d;
  return out === null ? null : Math.min(out, MAX_DEADLINE_MS);
}

/** The absolute deadline a request asked for, resolved at `now`; null when it asked for none. */
export function resolveCallerDeadline(spec: CallerDeadline, now = Date.now()): number | null {
  return earliestDeadline(spec.deadline, spec.timeoutMs === undefined ? undefined : now + spec.timeoutMs);
}
