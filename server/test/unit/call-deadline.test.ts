// Where a call's deadline comes from: the earliest of the caller's (session, turn), the tool's own
// timeoutMs and the operator's cap, fixed when the call starts. Pure arithmetic, no database.
import type { ToolPlacement } from "@aexhq/brain-contracts";
import { earliestDeadline, MAX_DEADLINE_MS, resolveCallerDeadline } from "@aexhq/brain-contracts";
import { describe, expect, it } from "vitest";
import { callDeadline, callerDeadline } from "../../src/loop/call-deadline.js";
import { fold, initialState } from "../../src/loop/state.js";

const NOW = 1_000_000;
const tool = (timeoutMs?: number) => ({ name: "t", timeoutMs }) as unknown as ToolPlacement;

describe("callDeadline", () => {
  it("is unlimited (null) when no one bounds the call", () => {
    expect(callDeadline(tool(), null, 0, NOW)).toBeNull();
    expect(callDeadline(undefined, null, 0, NOW)).toBeNull();
  });

  it("takes the earliest of the caller's deadline, the tool's timeoutMs and the operator's cap", () => {
    expect(callDeadline(tool(5_000), null, 0, NOW)).toBe(NOW + 5_000);
    expect(callDeadline(tool(5_000), NOW + 2_000, 0, NOW)).toBe(NOW + 2_000);
    expect(callDeadline(tool(5_000), NOW + 9_000, 3_000, NOW)).toBe(NOW + 3_000);
    expect(callDeadline(tool(), NOW + 9_000, 0, NOW)).toBe(NOW + 9_000);
  });

  it("reads a zero timeoutMs or cap as none, never as an instant deadline", () => {
    expect(callDeadline(tool(0), null, 0, NOW)).toBeNull();
    expect(callDeadline(tool(0), null, 4_000, NOW)).toBe(NOW + 4_000);
  });
});

describe("callerDeadline", () => {
  it("is the session's and the running turn's, whichever is earlier", () => {
    const state = initialState();
    fold(state, { seq: 1, kind: "session_created", payload: { deadline: NOW + 10_000 } });
    expect(callerDeadline(state)).toBe(NOW + 10_000);
    fold(state, { seq: 2, kind: "user_message", payload: { text: "hi", deadline: NOW + 4_000 } });
    fold(state, { seq: 3, kind: "activation_started", payload: { message: 2 } });
    expect(callerDeadline(state)).toBe(NOW + 4_000);
  });

  it("applies only the session's to an activation that no message started", () => {
    const state = initialState();
    fold(state, { seq: 1, kind: "session_created", payload: {} });
    fold(state, { seq: 2, kind: "activation_started", payload: { observations: [] } });
    expect(callerDeadline(state)).toBeNull();
  });
});

describe("caller deadlines on the wire", () => {
  it("resolves timeoutMs from when Brain accepts the request, and the earlier of both wins", () => {
    expect(resolveCallerDeadline({}, NOW)).toBeNull();
    expect(resolveCallerDeadline({ timeoutMs: 500 }, NOW)).toBe(NOW + 500);
    expect(resolveCallerDeadline({ deadline: NOW + 100, timeoutMs: 500 }, NOW)).toBe(NOW + 100);
    expect(resolveCallerDeadline({ deadline: NOW + 900, timeoutMs: 500 }, NOW)).toBe(NOW + 500);
  });

  it("never stores a deadline past the latest one every clock and column holds", () => {
    expect(earliestDeadline(undefined, null)).toBeNull();
    expect(earliestDeadline(Number.MAX_SAFE_INTEGER)).toBe(MAX_DEADLINE_MS);
    expect(earliestDeadline(3, null, 2, undefined)).toBe(2);
  });
});
