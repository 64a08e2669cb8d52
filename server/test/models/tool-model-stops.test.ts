// What stops a tool's pending model request, and what the journal says: the tool's deadline,
// its own finish, a cancelled turn, a provider error, and a server that dies mid-request (recorded
// `unknown` by another server, never replayed). Real servers, the public SDK, and a fake
// OpenAI-compatible provider over real HTTP.
import { Brain, tool } from "@aexhq/brain";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { type FakeProvider, startFakeOpenAI } from "../../../testkit/fake-providers.js";
import { spawnServer } from "../../../testkit/server-process.js";
import { deferred, type JournalRow, journalOf, until } from "../../../testkit/tool-harness.js";

let server: InProcessBrain;
let provider: FakeProvider;
const brains: Brain[] = [];

beforeAll(async () => {
  server = await startBrain();
  provider = await startFakeOpenAI({ apiKey: "sk-stops" });
});
afterAll(async () => {
  await server?.close();
  await provider?.close();
});
afterEach(async () => {
  for (const b of brains.splice(0)) await b.close();
});

function client(url = server.url, token = server.token): Brain {
  const b = new Brain({ url, token });
  brains.push(b);
  return b;
}

const model = () => ({ provider: "openai" as const, name: "gpt-test", apiKey: "sk-stops", baseUrl: provider.url });
const ask = { messages: [{ role: "user" as const, content: "slow question" }] };

/** The tool's model_call_ended, once journaled. */
function toolModelEnd(sessionId: string, sql = server.db.sql): Promise<JournalRow> {
  return until("the tool's model call to end", async () =>
    (await journalOf(sql, sessionId)).find(
      (r) => r.kind === "model_call_ended" && (r.payload.origin as { type?: string } | undefined)?.type === "tool",
    ),
  );
}

describe("stopping a tool's model request", () => {
  it("stops it at the tool's deadline and records it unknown (the provider may have acted on it)", async () => {
    const failure = deferred<string>();
    const slow = tool({
      name: "slow",
      description: "Waits on the model past its deadline.",
      input: z.object({}),
      timeoutMs: 400,
      run: async (_input, ctx) => {
        await ctx.model(ask).then(
          () => failure.resolve("answered"),
          (e: { code: string }) => failure.resolve(e.code),
        );
      },
    });
    provider.reply({ toolCalls: [{ name: "slow", input: {} }] }, { kind: "hang" }, { text: "done" });
    const before = provider.requests.length;
    const s = await client().sessions.create({ model: model(), tools: [slow()] });
    await expect(s.send("go")).resolves.toBe("done");
    const end = await toolModelEnd(s.id);
    expect(end.payload.outcome).toMatchObject({ status: "unknown" });
    expect(["deadline", "call_ended"]).toContain((end.payload.outcome as { cause: string }).cause);
    // The provider saw its request abandoned, not answered.
    const hung = provider.requests[before + 1]!;
    await expect(hung.closed).resolves.toEqual({ completed: false });
    const journal = await journalOf(server.db.sql, s.id);
    expect(journal.find((r) => r.kind === "tool_call_ended")?.payload.outcome).toMatchObject({ status: "timeout" });
  });

  it("stops it when the tool finishes, and the pending ctx.model rejects with model_call_stopped", async () => {
    const pending = deferred<string>();
    const quick = tool({
      name: "quick",
      description: "Starts a model call and finishes without it.",
      input: z.object({}),
      run: async (_input, ctx) => {
        void ctx.model(ask).then(
          () => pending.resolve("answered"),
          (e: { code: string }) => pending.resolve(e.code),
        );
        // Finish only once the request is journaled (in flight at the provider).
        await provider.waitForRequests(provider.requests.length);
        await until("the request to be in flight", async () =>
          (await journalOf(server.db.sql, ctx.sessionId)).some(
            (r) => r.kind === "model_call_started" && (r.payload.origin as { type?: string }).type === "tool",
          ),
        );
        return ctx.finish({ finished: true });
      },
    });
    provider.reply({ toolCalls: [{ name: "quick", input: {} }] }, { kind: "hang" }, { text: "done" });
    const s = await client().sessions.create({ model: model(), tools: [quick()] });
    await expect(s.send("go")).resolves.toBe("done");
    const end = await toolModelEnd(s.id);
    expect(end.payload.outcome).toEqual({ status: "unknown", cause: "call_ended" });
    expect(await pending.promise).toMatch(/model_call_stopped|execution_finished/);
  });

  it("stops it when the turn is cancelled (an interruption), and the provider sees the request dropped", async () => {
    const started = deferred<string>();
    const waiting = tool({
      name: "waiting",
      description: "Waits on the model until the turn is cancelled.",
      input: z.object({}),
      run: async (_input, ctx) => {
        started.resolve(ctx.sessionId);
        await ctx.model(ask).catch(() => {});
      },
    });
    provider.reply({ toolCalls: [{ name: "waiting", input: {} }] }, { kind: "hang" });
    const before = provider.requests.length;
    const s = await client().sessions.create({ model: model(), tools: [waiting()] });
    const turn = s.send("go");
    await started.promise;
    const [, hung] = await provider.waitForRequests(before + 2).then((all) => all.slice(before));
    await s.cancel();
    // A cancelled turn rejects `send` with turn_cancelled (it is not an empty answer).
    await expect(turn).rejects.toMatchObject({ code: "turn_cancelled" });
    const end = await toolModelEnd(s.id);
    expect(end.payload.outcome).toEqual({ status: "unknown", cause: "call_ended" });
    await expect(hung!.closed).resolves.toEqual({ completed: false });
  });

  it("sends the provider exactly what the tool asked: no system prompt, no tools, no response format", async () => {
    const asked = tool({
      name: "asked",
      description: "One bare model call.",
      input: z.object({}),
      run: async (_input, ctx) => ctx.finish({ text: (await ctx.model(ask)).text }),
    });
    provider.reply({ toolCalls: [{ name: "asked", input: {} }] }, { text: "bare answer" }, { text: "done" });
    const before = provider.requests.length;
    const s = await client().sessions.create({ model: model(), tools: [asked()] });
    await expect(s.send("go")).resolves.toBe("done");
    const body = provider.requests[before + 1]!.body;
    // Nothing of the conversation or the session's tools leaks into an independent call.
    expect(body.messages).toEqual([{ role: "user", content: "slow question" }]);
    expect(body).not.toHaveProperty("tools");
    expect(body).not.toHaveProperty("response_format");
    expect(body.model).toBe("gpt-test");
  });

  it("journals a provider error with its code and rejects the tool's call with it", async () => {
    const code = deferred<string>();
    const limited = tool({
      name: "limited",
      description: "Meets a rate limit.",
      input: z.object({}),
      run: async (_input, ctx) => {
        await ctx.model(ask).then(
          () => code.resolve("answered"),
          (e: { code: string }) => code.resolve(e.code),
        );
        return ctx.finish({});
      },
    });
    provider.reply(
      { toolCalls: [{ name: "limited", input: {} }] },
      { kind: "error", status: 429, message: "slow down" },
      { text: "done" },
    );
    const s = await client().sessions.create({ model: { ...model(), maxAttempts: 1 }, tools: [limited()] });
    await expect(s.send("go")).resolves.toBe("done");
    expect(await code.promise).toBe("model_rate_limited");
    const end = await toolModelEnd(s.id);
    expect(end.payload.outcome).toMatchObject({ status: "error", error: { code: "model_rate_limited" } });
  });
});

describe("a server that dies mid-request", () => {
  it("has its tool's model call recorded unknown by another server, and the request is never replayed", async () => {
    const doomed = await spawnServer({ databaseUrl: server.db.url, env: { BRAIN_LOG_LEVEL: "warn" } });
    try {
      const started = deferred<string>();
      const hanging = tool({
        name: "hanging",
        description: "Waits on the model while its server dies.",
        input: z.object({}),
        run: async (_input, ctx) => {
          started.resolve(ctx.sessionId);
          await ctx.model(ask).catch(() => {});
        },
      });
      provider.reply({ toolCalls: [{ name: "hanging", input: {} }] }, { kind: "hang" });
      const before = provider.requests.length;
      const b = client(doomed.url, doomed.token);
      const s = await b.sessions.create({ model: model(), tools: [hanging()] });
      void s.send("go").catch(() => {});
      const sessionId = await started.promise;
      await provider.waitForRequests(before + 2);
      await until("the request to be journaled", async () =>
        (await journalOf(server.db.sql, sessionId)).find((r) => r.kind === "model_call_started" && r.seq > 3),
      );
      await doomed.kill("SIGKILL");

      const end = await toolModelEnd(sessionId);
      expect(end.payload.outcome).toEqual({ status: "unknown", cause: "runner_lost" });
      expect(end.payload.origin).toMatchObject({ type: "tool", sessionId });
      // Exactly one request for the tool reached the provider: nothing replayed it.
      const toolRequests = provider.requests
        .slice(before)
        .filter((r) => JSON.stringify(r.body.messages).includes("slow question"));
      expect(toolRequests).toHaveLength(1);
      const [open] = await server.db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM tool_model_calls WHERE session_id = ${sessionId}`;
      expect(open?.n).toBe(0);
    } finally {
      await doomed.stop().catch(() => {});
    }
  }, 60_000);
});
