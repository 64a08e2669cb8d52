// Failure handling shared by both real providers: HTTP statuses, broken streams, network failures,
// timeouts, aborts, and keeping the API key out of every message.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Egress } from "@aexhq/brain-core/egress";
import { type ModelAttempt, ModelCallError } from "@aexhq/brain-core/models";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loopbackEgress } from "../../../testkit/egress.js";
import type { FakeProvider, FakeReply } from "../../../testkit/fake-providers.js";
import { within } from "../../../testkit/wait.js";
import { context, type Flavor, failure, hello, KEY, provider, startFake } from "./providers-support.js";

describe.each<Flavor>(["openai", "anthropic"])("%s failures", (flavor) => {
  let fake: FakeProvider;
  beforeAll(async () => {
    fake = await startFake(flavor);
  });
  afterAll(async () => {
    await fake?.close();
  });
  // One attempt: these tests read how a single answer maps; retries have tests of their own.
  const model = (extra: Parameters<typeof provider>[2] = {}) =>
    provider(flavor, fake.url, { maxAttempts: 1, ...extra });

  it("maps each HTTP error status to its code, quoting the provider's message and the status", async () => {
    const cases = [
      [400, "model_bad_request"],
      [401, "model_auth_failed"],
      [403, "model_auth_failed"],
      [404, "model_bad_request"],
      [409, "model_bad_request"],
      [413, "model_bad_request"],
      [422, "model_bad_request"],
      [429, "model_rate_limited"],
      [500, "model_unavailable"],
      [503, "model_unavailable"],
      [529, "model_unavailable"],
      [418, "model_error"],
    ] as const;
    for (const [status, code] of cases) {
      fake.reply({ kind: "error", status, message: `provider says no (${status})` });
      const error = await failure(model().complete(hello, context()));
      expect(error.code).toBe(code);
      expect(error.status).toBe(status);
      expect(error.message).toContain(`HTTP ${status}`);
      expect(error.message).toContain(`provider says no (${status})`);
    }
  });

  it("a conversation past the context window: model_context_exceeded with the numbers the provider gave", async () => {
    const refusals = [
      // OpenAI and compatible servers (vLLM says the same).
      {
        error: {
          message:
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
          type: "invalid_request_error",
          code: "context_length_exceeded",
        },
      },
      // Anthropic.
      {
        type: "error",
        error: { type: "invalid_request_error", message: "prompt is too long: 210000 tokens > 200000 maximum" },
      },
      // llama.cpp's server: no numbers.
      {
        error: {
          code: 400,
          message: "the request exceeds the available context size, try increasing it",
          type: "exceed_context_size_error",
        },
      },
    ];
    const numbers: unknown[] = [];
    for (const body of refusals) {
      fake.reply({ kind: "error", status: 400, body });
      const error = await failure(model().complete(hello, context()));
      expect(error.code).toBe("model_context_exceeded");
      numbers.push(error.context);
    }
    expect(numbers).toEqual([{ tokens: 9000, window: 8192 }, { tokens: 210000, window: 200000 }, {}]);
    // Any other 400 stays model_bad_request.
    fake.reply({ kind: "error", status: 400, message: "temperature must be at most 2" });
    expect((await failure(model().complete(hello, context()))).code).toBe("model_bad_request");
  });

  it("sends nothing to an address the egress guard does not open: egress_denied", async () => {
    const before = fake.requests.length;
    const closed = provider(flavor, fake.url, {}, { fetch: new Egress({ allow: [] }).fetch, maxAnswerBytes: 1 << 20 });
    const error = await failure(closed.complete(hello, context()));
    expect(error.code).toBe("egress_denied");
    expect(error.message).toMatch(/127\.0\.0\.1 is a loopback address/);
    expect(fake.requests.length).toBe(before);
  });

  it("stops reading past the answer cap and lets the connection go: answer_too_large", async () => {
    fake.reply({ kind: "endless" });
    const capped = provider(flavor, fake.url, {}, { fetch: loopbackEgress().fetch, maxAnswerBytes: 256 * 1024 });
    const error = await failure(capped.complete(hello, context()));
    expect(error.code).toBe("answer_too_large");
    expect(error.message).toContain("262144 bytes");
    await within(fake.requests.at(-1)!.closed, "the provider's connection to close");
  });

  it("quotes a non-JSON error body and cuts long messages", async () => {
    fake.reply({ kind: "error", status: 502, body: "Bad Gateway from a proxy" });
    expect((await failure(model().complete(hello, context()))).message).toContain("Bad Gateway from a proxy");
    fake.reply({ kind: "error", status: 400, message: "x".repeat(50_000) });
    const long = await failure(model().complete(hello, context()));
    expect(long.code).toBe("model_bad_request");
    expect(long.message.length).toBeLessThan(1200);
  });

  it("fails with model_error when the stream ends early or is malformed", async () => {
    fake.reply({ kind: "truncated", text: "half an ans" });
    expect((await failure(model().complete(hello, context()))).code).toBe("model_error");
    fake.reply({ kind: "raw", chunks: ["data: {not json\n\n"] });
    expect((await failure(model().complete(hello, context()))).code).toBe("model_error");
    fake.reply({ kind: "raw", chunks: ["<html>not a stream</html>"], contentType: "text/html" });
    expect((await failure(model().complete(hello, context()))).code).toBe("model_error");
    fake.reply({ kind: "raw", chunks: ["{not json"], contentType: "application/json" });
    expect((await failure(model().complete(hello, context()))).code).toBe("model_error");
  });

  it("maps an error sent inside the stream", async () => {
    fake.reply({ kind: "stream-error", error: { type: "rate_limit_error", message: "slow down" } });
    const error = await failure(model().complete(hello, context()));
    expect(error.code).toBe("model_rate_limited");
    expect(error.message).toContain("slow down");
  });

  it("fails with model_unavailable when the connection drops mid-stream", async () => {
    fake.reply({ kind: "reset", text: "some text" });
    expect((await failure(model().complete(hello, context()))).code).toBe("model_unavailable");
  });

  it("fails with model_unavailable when nothing listens", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const attempts: ModelAttempt[] = [];
    const error = await failure(
      provider(flavor, `http://127.0.0.1:${port}`, { maxAttempts: 2 }).complete(hello, { ...context(), attempts }),
    );
    expect(error.code).toBe("model_unavailable");
    expect(error.message).toContain("ECONNREFUSED");
    // A refused connection never reached the provider: it was tried again.
    expect(attempts.map((a) => a.error?.code)).toEqual(["model_unavailable", "model_unavailable"]);
  });

  it("does not follow a redirect with the key", async () => {
    const elsewhere = await startFake(flavor);
    const redirecting = createServer((req, res) => {
      req.resume();
      res.writeHead(307, { location: `${elsewhere.url}${flavor === "openai" ? "/chat/completions" : "/v1/messages"}` });
      res.end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = redirecting.address() as AddressInfo;
      const error = await failure(provider(flavor, `http://127.0.0.1:${port}`).complete(hello, context()));
      expect(error.code).toBe("model_error");
      expect(error.status).toBe(307);
      expect(elsewhere.requests).toEqual([]);
    } finally {
      redirecting.closeAllConnections();
      await new Promise<void>((resolve) => redirecting.close(() => resolve()));
      await elsewhere.close();
    }
  });

  it("fails with model_timeout when no answer arrives in time, and closes the connection", async () => {
    fake.reply({ kind: "hang" });
    const before = fake.requests.length;
    const error = await failure(model({ timeoutMs: 300 }).complete(hello, context()));
    expect(error.code).toBe("model_timeout");
    expect(await within(fake.requests[before]!.closed, "the fake to see the connection close")).toEqual({
      completed: false,
    });
  });

  it("fails with model_timeout when the stream stalls after it started", async () => {
    fake.reply({ kind: "hang", after: "first-chunk" });
    const error = await failure(model({ timeoutMs: 300 }).complete(hello, context()));
    expect(error.code).toBe("model_timeout");
  });

  it("rejects with the signal's reason when aborted, and the provider sees the connection close", async () => {
    for (const after of ["nothing", "first-chunk"] as const) {
      fake.reply({ kind: "hang", after });
      const before = fake.requests.length;
      const controller = new AbortController();
      const call = model().complete(hello, context(controller.signal));
      const [request] = (await fake.waitForRequests(before + 1)).slice(before);
      const reason = new Error(`tool finished (${after})`);
      controller.abort(reason);
      const outcome = await within(
        call.then(
          () => "resolved",
          (e: unknown) => e,
        ),
        "the aborted call to settle",
      );
      expect(outcome).toBe(reason);
      expect(outcome).not.toBeInstanceOf(ModelCallError);
      expect(await within(request!.closed, "the fake to see the connection close")).toEqual({ completed: false });
    }
  });

  it("rejects with the reason of an already aborted signal without calling the provider", async () => {
    const before = fake.requests.length;
    const reason = new Error("already stopped");
    const outcome = await model()
      .complete(hello, context(AbortSignal.abort(reason)))
      .catch((e: unknown) => e);
    expect(outcome).toBe(reason);
    expect(fake.requests.length).toBe(before);
  });
});

describe.each<Flavor>(["openai", "anthropic"])("%s keeps the API key out of errors", (flavor) => {
  let fake: FakeProvider;
  beforeAll(async () => {
    fake = await startFake(flavor, { apiKey: "the-right-key" });
  });
  afterAll(async () => {
    await fake?.close();
  });

  const noKey = (error: ModelCallError) => {
    expect(error.message).not.toContain(KEY);
    // Not even a piece of it.
    expect(error.message).not.toContain(KEY.slice(0, 12));
    expect(error.message).not.toContain(KEY.slice(-12));
  };

  it("redacts a key the provider quotes back in a rejection", async () => {
    const error = await failure(provider(flavor, fake.url).complete(hello, context()));
    expect(error.code).toBe("model_auth_failed");
    expect(fake.requests.at(-1)!.headers[flavor === "openai" ? "authorization" : "x-api-key"]).toContain(KEY);
    expect(error.message).toContain("[redacted]");
    noKey(error);
  });

  it("keeps out a key that cannot even be sent as a header", async () => {
    const bad = "sk-line\nbreak-0123456789-secret";
    const error = await failure(provider(flavor, fake.url, { apiKey: bad }).complete(hello, context()));
    expect(error.message).not.toContain("break-0123456789-secret");
  });

  it("redacts a key echoed in request headers, in error bodies, raw text, stream errors and at the cut", async () => {
    const right = provider(flavor, fake.url, { apiKey: "the-right-key" });
    // The fake checks for its own key; these answers echo whatever was presented, so present KEY.
    const fakeKeyed = await startFake(flavor);
    try {
      const keyed = provider(flavor, fakeKeyed.url, { maxAttempts: 1 });
      const echoes: FakeReply[] = [
        {
          kind: "error",
          status: 500,
          body: (r) => ({ error: { message: JSON.stringify(r.headers), type: "api_error" } }),
        },
        { kind: "error", status: 400, body: (r) => `raw: ${JSON.stringify(r.headers)}` },
        // The key straddles the point where long messages are cut.
        { kind: "error", status: 400, message: `${"y".repeat(1025)}${KEY}${"z".repeat(100)}` },
        { kind: "stream-error", error: { type: "api_error", message: `echo ${KEY} echo` } },
      ];
      fakeKeyed.reply(...echoes);
      for (const _ of echoes) noKey(await failure(keyed.complete(hello, context())));
    } finally {
      await fakeKeyed.close();
    }
    // And the right key works.
    expect((await right.complete(hello, context())).text).toBe("ok");
  });
});
