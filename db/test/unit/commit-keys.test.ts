// What a commit touched travels as keys (locally, and in NOTIFY payloads to other processes): the
// kind of each record decides whom it wakes, and the payloads stay under Postgres' 8000-byte limit.
import { describe, expect, it } from "vitest";
import { decodeKeys, emptyKeys, encodeKeys, mergeKeys, originPrefix, Touch, touchOf } from "../../src/commit-keys.js";

describe("touchOf", () => {
  it("wakes the Agentloop at once for a message or a cancel, through the window for observations", () => {
    expect(touchOf("user_message")).toBe(Touch.message);
    expect(touchOf("cancel_requested")).toBe(Touch.message);
    for (const kind of ["tool_result", "tool_returned", "tool_call_ended"])
      expect(touchOf(kind)).toBe(Touch.observation);
  });

  it("wakes turn waiters on activation_ended, and only stream readers for anything else", () => {
    expect(touchOf("activation_ended")).toBe(Touch.activationEnded | Touch.loop);
    expect(touchOf("session_ended")).toBe(Touch.ended);
    expect(touchOf("tool_call_started")).toBe(Touch.loop);
    expect(touchOf("progress")).toBe(Touch.other);
  });
});

describe("mergeKeys", () => {
  it("ORs the bits of a session touched twice and unions hosts and releases", () => {
    const a = emptyKeys();
    a.sessions.set("s1", Touch.message);
    a.hosts.add("h1");
    const b = emptyKeys();
    b.sessions.set("s1", Touch.observation);
    b.sessions.set("s2", Touch.other);
    b.hosts.add("h2");
    b.releases.set("s3", "h1");
    mergeKeys(a, b);
    expect([...a.sessions]).toEqual([
      ["s1", Touch.message | Touch.observation],
      ["s2", Touch.other],
    ]);
    expect([...a.hosts]).toEqual(["h1", "h2"]);
    expect([...a.releases]).toEqual([["s3", "h1"]]);
  });
});

describe("NOTIFY payloads", () => {
  it("round-trip through encode and decode, origin included", () => {
    const keys = emptyKeys();
    keys.sessions.set("0b8f6f5e-1111-4e2a-9a4b-0123456789ab", Touch.loop);
    keys.hosts.add("host-1");
    keys.releases.set("0b8f6f5e-1111-4e2a-9a4b-0123456789ab", "host-1");
    const [payload, ...rest] = encodeKeys("server-a", keys);
    expect(rest).toEqual([]);
    expect(decodeKeys(payload!)).toEqual({ origin: "server-a", keys });
  });

  it("split across as many payloads as needed, each under 8000 bytes, losing nothing", () => {
    const keys = emptyKeys();
    for (let i = 0; i < 1_000; i++) keys.sessions.set(`0b8f6f5e-1111-4e2a-9a4b-${String(i).padStart(12, "0")}`, i % 64);
    for (let i = 0; i < 300; i++) keys.hosts.add(`0c8f6f5e-2222-4e2a-9a4b-${String(i).padStart(12, "0")}`);
    for (let i = 0; i < 200; i++) keys.releases.set(`s-${i}`, `h-${i}`);
    const payloads = encodeKeys("o", keys);
    expect(payloads.length).toBeGreaterThan(1);
    const merged = emptyKeys();
    for (const p of payloads) {
      expect(Buffer.byteLength(p)).toBeLessThan(8000);
      const decoded = decodeKeys(p);
      expect(decoded?.origin).toBe("o");
      mergeKeys(merged, decoded!.keys);
    }
    expect(merged).toEqual(keys);
  });

  it("tell their origin by their first bytes, so a process drops its own unparsed", () => {
    const keys = emptyKeys();
    for (let i = 0; i < 400; i++) keys.sessions.set(`0b8f6f5e-1111-4e2a-9a4b-${String(i).padStart(12, "0")}`, 1);
    keys.hosts.add("host-1");
    const payloads = encodeKeys("server-a", keys);
    expect(payloads.length).toBeGreaterThan(1);
    for (const p of payloads) {
      expect(p.startsWith(originPrefix("server-a"))).toBe(true);
      // Another origin, one that begins with this one's name among them, is never taken for it.
      expect(p.startsWith(originPrefix("server-ab"))).toBe(false);
      expect(p.startsWith(originPrefix("server-"))).toBe(false);
    }
    expect(encodeKeys("server-ab", keys)[0]!.startsWith(originPrefix("server-a"))).toBe(false);
  });

  it("sends nothing for an empty commit", () => {
    expect(encodeKeys("o", emptyKeys())).toEqual([]);
  });

  it("reads a malformed payload as nothing, and an older one without releases", () => {
    expect(decodeKeys("not json")).toBeNull();
    expect(decodeKeys(JSON.stringify({ o: 1, s: [], h: [] }))).toBeNull();
    expect(decodeKeys(JSON.stringify({ o: "x", s: "no", h: [] }))).toBeNull();
    const old = decodeKeys(
      JSON.stringify({
        o: "x",
        s: [
          ["s1", 2],
          [3, "bad"],
        ],
        h: ["h", 7],
      }),
    );
    expect(old?.keys.sessions).toEqual(new Map([["s1", 2]]));
    expect(old?.keys.hosts).toEqual(new Set(["h"]));
    expect(old?.keys.releases.size).toBe(0);
  });
});
