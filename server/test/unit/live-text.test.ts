// LiveText without a database: what a server publishes and keeps of a streaming model call, what
// it takes from other servers' NOTIFYs, and that a database away never makes it queue without end.
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { LIVE_BATCH_MS, LiveText, type SessionDelta } from "../../src/live-text.js";

function hub(notify: (payload: string) => Promise<void> = async () => {}) {
  const errors: unknown[] = [];
  return { live: new LiveText({ origin: "server-a", notify, onError: (e) => errors.push(e) }), errors };
}

describe("LiveText", () => {
  it("batches a call's pieces, hands them to the session's followers, keeps the text so far, and ends it", async () => {
    const sent: string[] = [];
    const { live } = hub(async (p) => void sent.push(p));
    const seen: SessionDelta[] = [];
    live.subscribe("s1", (d) => seen.push(d));
    const call = live.open("s1", 7);
    call.push("Hel");
    call.push("lo");
    await sleep(LIVE_BATCH_MS * 4);
    expect(seen).toEqual([
      { sessionId: "s1", live: true, kind: "model_text_delta", call: 7, offset: 0, text: "Hello" },
    ]);
    expect(live.snapshot("s1")).toEqual([seen[0]]);
    call.push(" world");
    call.close();
    expect(seen.at(-1)).toMatchObject({ offset: 5, text: " world" });
    expect(live.snapshot("s1")).toEqual([]);
    await sleep(10);
    expect(sent.map((p) => JSON.parse(p))).toEqual([
      { o: "server-a", s: "s1", c: 7, i: 0, t: "Hello" },
      { o: "server-a", s: "s1", c: 7, i: 5, t: " world" },
      { o: "server-a", s: "s1", c: 7, i: 11, t: "", e: 1 },
    ]);
  });

  it("takes other servers' payloads, drops its own and malformed ones, and a call that streamed nothing costs nothing", async () => {
    const sent: string[] = [];
    const { live } = hub(async (p) => void sent.push(p));
    const seen: SessionDelta[] = [];
    live.subscribe("s2", (d) => seen.push(d));
    live.receive(JSON.stringify({ o: "server-b", s: "s2", c: 3, i: 0, t: "from b" }));
    live.receive(JSON.stringify({ o: "server-a", s: "s2", c: 3, i: 6, t: "mine" }));
    live.receive("not json");
    live.receive(JSON.stringify({ o: "server-b", s: "s2", c: -1, i: 0, t: "bad" }));
    expect(seen.map((d) => d.text)).toEqual(["from b"]);
    expect(live.snapshot("s2")).toMatchObject([{ call: 3, offset: 0, text: "from b" }]);
    live.receive(JSON.stringify({ o: "server-b", s: "s2", c: 3, i: 6, t: "", e: 1 }));
    expect(live.snapshot("s2")).toEqual([]);
    live.open("s2", 9).close();
    await sleep(10);
    expect(sent).toEqual([]);
  });

  it("splits a long batch under NOTIFY's limit, and drops what it cannot queue while the database is away", async () => {
    let release = () => {};
    const stalled = new Promise<void>((resolve) => {
      release = resolve;
    });
    const sent: string[] = [];
    const { live } = hub(async (p) => {
      sent.push(p);
      await stalled;
    });
    const call = live.open("s3", 1);
    call.push("x".repeat(5_000));
    call.close();
    for (let i = 0; i < 2_000; i++) {
      const c = live.open("s3", 100 + i);
      c.push("y");
      c.close();
    }
    await sleep(10);
    // The first NOTIFY hangs: nothing else is sent meanwhile, and the queue is bounded.
    expect(sent).toHaveLength(1);
    expect(Buffer.byteLength(sent[0]!)).toBeLessThan(8_000);
    release();
    await sleep(50);
    expect(sent.length).toBeLessThanOrEqual(1_000);
    expect(sent.length).toBeGreaterThan(100);
  });
});
