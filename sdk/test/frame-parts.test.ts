import { byteLength, HostFrameSchema, MAX_FRAME_BYTES } from "@aexhq/brain-contracts";
import { describe, expect, it } from "vitest";
import { encodeFrameParts } from "../src/frame-encoding.js";
import { SESSION_ID } from "./recording-channel.js";

const call = { sessionId: SESSION_ID, sequence: 7 };

describe("a result frame larger than one WebSocket frame", () => {
  // Escapes grow up to six times (control characters), emoji are surrogate pairs: parts must
  // split inside all of them and still reassemble to exactly the frame.
  it.each([
    ["plain", "x".repeat(300 * 1024)],
    ["escapes, multi-byte characters and surrogate pairs", 'a"b\\c\u00e9\u{1F600}\n\t\u0001<>'.repeat(40_000)],
    ["only control characters", "\u0001".repeat(200 * 1024)],
  ])("travels as valid parts within the limit that reassemble exactly: %s", (_label, text) => {
    const frame = { type: "finish" as const, ...call, outcome: { status: "ok" as const, value: { text } } };
    const parts = encodeFrameParts(frame, 9);
    expect(parts.length).toBeGreaterThan(1);
    const parsed = parts.map((p) => {
      expect(byteLength(p)).toBeLessThanOrEqual(MAX_FRAME_BYTES);
      return HostFrameSchema.parse(JSON.parse(p));
    });
    expect(parsed.every((p) => p.type === "part" && p.id === 9 && p.sessionId === SESSION_ID && p.sequence === 7)).toBe(
      true,
    );
    expect(parsed.map((p) => (p as { last: boolean }).last)).toEqual(parsed.map((_, i) => i === parsed.length - 1));
    const whole = parsed.map((p) => (p as { data: string }).data).join("");
    expect(whole).toBe(JSON.stringify({ ...frame, id: 9 }));
    expect(JSON.parse(whole).outcome.value.text).toBe(text);
  });

  it("a frame within the limit is one frame, as before", () => {
    const frame = { type: "result" as const, ...call, outcome: { status: "ok" as const, value: 1 } };
    expect(encodeFrameParts(frame, 1)).toEqual([JSON.stringify({ ...frame, id: 1 })]);
  });

  it("control frames stay within the limit: an oversize emit is frame_too_large, nothing sent", () => {
    const frame = { type: "emit" as const, ...call, kind: "big", data: "x".repeat(MAX_FRAME_BYTES) };
    expect(() => encodeFrameParts(frame, 1)).toThrow(expect.objectContaining({ code: "frame_too_large" }));
  });
});
