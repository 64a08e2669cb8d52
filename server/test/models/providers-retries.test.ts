// Retries of requests the provider certainly did not process (429, 529, other 5xx, a refused
// connection): after its retry-after or a jittered back-off, up to maxAttempts, each attempt
// handed back for the journal. Both real providers, against their local fakes.
import type { ModelAttempt } from "@aexhq/brain-core/models";
import { describe, expect, it } from "vitest";
import { context, type Flavor, failure, fakeProviderSuite, hello } from "./providers-support.js";

describe.each<Flavor>(["openai", "anthropic"])("%s retries", (flavor) => {
  const { fake, model } = fakeProviderSuite(flavor);

  it("a 429 twice with retry-after, then an answer: one call, three attempts, the waits the provider asked", async () => {
    fake.reply(
      { kind: "error", status: 429, message: "slow down", headers: { "retry-after": "0" } },
      { kind: "error", status: 429, message: "slow down", headers: { "retry-after-ms": "30" } },
      { text: "at last" },
    );
    const before = fake.requests.length;
    const attempts: ModelAttempt[] = [];
    const answer = await model().complete(hello, { ...context(), attempts });
    expect(answer.text).toBe("at last");
    expect(fake.requests.length - before).toBe(3);
    expect(attempts).toEqual([
      { status: 429, error: { code: "model_rate_limited", message: expect.stringContaining("slow down") }, waitMs: 0 },
      { status: 429, error: { code: "model_rate_limited", message: expect.stringContaining("slow down") }, waitMs: 30 },
      { status: 200 },
    ]);
  });

  it("529 and 503 are retried with back-off; the last attempt's error is the call's", async () => {
    fake.reply({ kind: "error", status: 529, message: "overloaded" }, { kind: "error", status: 503, message: "down" });
    const attempts: ModelAttempt[] = [];
    const error = await failure(model({ maxAttempts: 2 }).complete(hello, { ...context(), attempts }));
    expect(error).toMatchObject({ code: "model_unavailable", status: 503 });
    expect(attempts.map((a) => a.status)).toEqual([529, 503]);
    expect(attempts[0]!.waitMs).toBeGreaterThanOrEqual(0);
    expect(attempts[0]!.waitMs).toBeLessThanOrEqual(500);
    expect(attempts[1]!.waitMs).toBeUndefined();
  });

  it("never retries what the provider may have acted on, or a client error", async () => {
    for (const reply of [
      { kind: "reset", text: "half" },
      { kind: "error", status: 400, message: "bad" },
      { kind: "error", status: 401, message: "who" },
    ] as const) {
      fake.reply(reply, { text: "must not be asked for" });
      const before = fake.requests.length;
      const attempts: ModelAttempt[] = [];
      await failure(model().complete(hello, { ...context(), attempts }));
      expect(fake.requests.length - before).toBe(1);
      expect(attempts).toEqual([]);
      // The answer queued for a retry that never came is taken here.
      expect((await model().complete(hello, context())).text).toBe("must not be asked for");
    }
  });

  it("a retry-after past the cap, or past the caller's deadline, is not waited for", async () => {
    fake.reply({ kind: "error", status: 429, headers: { "retry-after": "3600" } });
    const before = fake.requests.length;
    expect((await failure(model().complete(hello, context()))).code).toBe("model_rate_limited");
    fake.reply({ kind: "error", status: 429, headers: { "retry-after": "5" } });
    const soon = { ...context(), deadline: Date.now() + 1000 };
    expect((await failure(model().complete(hello, soon))).code).toBe("model_rate_limited");
    expect(fake.requests.length - before).toBe(2);
  });

  it("a stop during the wait ends the call with the stop, the attempts so far kept", async () => {
    fake.reply({ kind: "error", status: 429, headers: { "retry-after": "30" } });
    const controller = new AbortController();
    const attempts: ModelAttempt[] = [];
    const before = fake.requests.length;
    const call = model().complete(hello, { ...context(controller.signal), attempts });
    await fake.waitForRequests(before + 1);
    setTimeout(() => controller.abort(new Error("stopped by the test")), 50);
    await expect(call).rejects.toThrow("stopped by the test");
    expect(attempts).toHaveLength(1);
  });
});
