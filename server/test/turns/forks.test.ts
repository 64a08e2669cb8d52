// Forks: a session made from another's journal up to a sequence. The fork's journal is the
// source's up to there, what was open there is closed in it, its lineage shows in brain.sessions and
// the API, and its next turn runs the Agentloop on the forked conversation (here with another
// model), while the source is unchanged.
import { Brain, tool } from "@aexhq/brain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { expectError, request } from "../../../testkit/api.js";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { type FakeProvider, startFakeOpenAI } from "../../../testkit/fake-providers.js";
import { journalOf } from "../../../testkit/tool-harness.js";
import { until } from "../../../testkit/wait.js";

let server: InProcessBrain;
let brain: Brain;
let openai: FakeProvider;

beforeAll(async () => {
  server = await startBrain();
  brain = new Brain({ url: server.url, token: server.token });
  openai = await startFakeOpenAI();
});
afterAll(async () => {
  await brain?.close();
  await server?.close();
  await openai?.close();
});

describe("forks", () => {
  it("a fork at the step before a bad tool result, with another model, makes a different next turn", async () => {
    let bad = true;
    let runs = 0;
    const lookup = tool({
      name: "lookup",
      description: "Looks up a price.",
      input: z.object({ item: z.string() }),
      run: async ({ item }, ctx) => {
        runs++;
        return ctx.finish({ item, price: bad ? -1 : 3 });
      },
    });
    // The source: the model asks for the price, the tool answers a bad one, the model repeats it.
    const source = await brain.sessions.create({
      model: {
        provider: "scripted",
        script: [{ toolCalls: [{ name: "lookup", input: { item: "tea" } }] }, { text: "Tea costs -1." }],
      },
      tools: [lookup()],
    });
    await expect(source.send("price of tea?")).resolves.toBe("Tea costs -1.");
    const journal = await journalOf(server.db.sql, source.id);
    const started = journal.find((r) => r.kind === "tool_call_started")!;
    // The bad result is the first record the call answered with (its tool_result, or its end).
    const badResult = journal.find((r) => r.seq > started.seq && r.payload.call === started.seq)!;
    expect(JSON.stringify(badResult.payload)).toContain("-1");
    const at = Number(badResult.seq) - 1;

    // Forked just before the bad result, with another model: the call was open there.
    bad = false;
    openai.reply(
      { text: "Let me look again.", toolCalls: [{ name: "lookup", input: { item: "tea" } }] },
      { text: "Tea costs 3." },
    );
    const fork = await brain.sessions.fork(source.id, {
      at,
      model: { provider: "openai", name: "gpt-test", apiKey: "sk-fork", baseUrl: openai.url },
      tools: [lookup()],
    });
    expect(fork.info.forkedFrom).toEqual({ session: source.id, sequence: at });
    const forked = await journalOf(server.db.sql, fork.id);
    expect(forked[0]!.payload).toMatchObject({ forkedFrom: { session: source.id, sequence: at } });
    expect(forked.slice(1, at).map((r) => [r.seq, r.kind, r.payload])).toEqual(
      journal.slice(1, at).map((r) => [r.seq, r.kind, r.payload]),
    );
    // What was open at `at` is closed in the fork's journal, not carried as open.
    const closing = forked.slice(at);
    expect(closing.map((r) => r.kind)).toEqual(["tool_call_ended", "activation_ended"]);
    expect(closing[0]!.payload).toEqual({ call: started.seq, outcome: { status: "cancelled", cause: "forked" } });
    expect(closing[1]!.payload).toMatchObject({ status: "cancelled" });

    await expect(fork.send("and now?")).resolves.toBe("Tea costs 3.");
    // The copied call is never sent again: the fork's host ran only the new model's call.
    expect(runs).toBe(2);
    // The new model saw the forked conversation: the question, and the call closed as forked.
    const asked = JSON.stringify(openai.requests.at(-2)!.body.messages);
    expect(asked).toContain("price of tea?");
    expect(asked).toContain("forked");
    expect(asked).not.toContain("-1");

    // The source is unchanged, and the lineage shows in SQL.
    expect(await journalOf(server.db.sql, source.id)).toEqual(journal);
    const [row] = await server.db.sql<{ forked_from: string; forked_at: number }[]>`
      SELECT forked_from, forked_at::int AS forked_at FROM brain.sessions WHERE id = ${fork.id}`;
    expect(row).toEqual({ forked_from: source.id, forked_at: at });
    const [model] = await server.db.sql<{ model: { provider: string } }[]>`
      SELECT model FROM brain.sessions WHERE id = ${fork.id}`;
    expect(model!.model).toEqual({ provider: "openai", name: "gpt-test", baseUrl: openai.url });
  });

  it("keeps the source's model and its sealed key when no other is asked for", async () => {
    openai.reply({ text: "one" }, { text: "two" });
    const source = await brain.sessions.create({
      model: { provider: "openai", name: "gpt-test", apiKey: "sk-source-key", baseUrl: openai.url },
    });
    await expect(source.send("first")).resolves.toBe("one");
    const last = (await journalOf(server.db.sql, source.id)).at(-1)!;
    const fork = await brain.sessions.fork(source.id, { at: Number(last.seq) });
    await expect(fork.send("second")).resolves.toBe("two");
    expect(openai.requests.at(-1)!.headers.authorization).toBe("Bearer sk-source-key");
    await until("nothing open in the fork", async () => (await journalOf(server.db.sql, fork.id)).length > 0);
  });

  it("a session's system prompt reaches its model; a fork's own replaces it, the source keeps its", async () => {
    openai.reply({ text: "as a pirate" }, { text: "as a clerk" }, { text: "still a pirate" });
    const model = { provider: "openai", name: "gpt-test", apiKey: "sk-system", baseUrl: openai.url } as const;
    const source = await brain.sessions.create({ model, system: "Answer as a pirate." });
    await expect(source.send("hello")).resolves.toBe("as a pirate");
    const systemOf = (i: number) => {
      const messages = openai.requests.at(i)!.body.messages as { role: string; content: unknown }[];
      return messages.filter((m) => m.role === "system").map((m) => m.content);
    };
    expect(systemOf(-1)).toEqual(["Answer as a pirate."]);
    const at = (await brain.sessions.get(source.id)).info.lastSequence;
    const fork = await brain.sessions.fork(source.id, { at, system: "Answer as a clerk." });
    const forked = await journalOf(server.db.sql, fork.id);
    expect(forked[0]!.payload).toMatchObject({ system: "Answer as a clerk.", forkedFrom: { session: source.id } });
    await expect(fork.send("hello again")).resolves.toBe("as a clerk");
    expect(systemOf(-1)).toEqual(["Answer as a clerk."]);
    await expect(source.send("hello again")).resolves.toBe("still a pirate");
    expect(systemOf(-1)).toEqual(["Answer as a pirate."]);
    expect((await journalOf(server.db.sql, source.id))[0]!.payload).toMatchObject({ system: "Answer as a pirate." });
    // A prompt that is empty or too long is refused, and nothing is made of it.
    for (const system of ["", "x".repeat(64 * 1024 + 1)]) {
      const path = `/v1/sessions/${source.id}/fork`;
      expectError(await request(server, "POST", path, { body: { at, system } }), "invalid_request");
    }
  });

  it("replay: a recorded session's fork against the scripted provider, as a regression test", async () => {
    openai.reply({ text: "recorded answer" });
    const recorded = await brain.sessions.create({
      model: { provider: "openai", name: "gpt-test", apiKey: "sk-recorded", baseUrl: openai.url },
    });
    await expect(recorded.send("question")).resolves.toBe("recorded answer");
    const asked = openai.requests.length;
    const at = (await brain.sessions.get(recorded.id)).info.lastSequence;
    const replay = await brain.sessions.replay(recorded.id, { at, script: [{ text: "scripted answer" }] });
    await expect(replay.send("follow-up")).resolves.toBe("scripted answer");
    // No provider was asked: the replay is the scripted model's alone.
    expect(openai.requests.length).toBe(asked);
  });

  it("refuses a sequence past the journal, or at or past the session's end", async () => {
    const source = await brain.sessions.create({ model: { provider: "scripted", script: [{ text: "ok" }] } });
    await source.send("hi");
    const path = `/v1/sessions/${source.id}/fork`;
    expectError(await request(server, "POST", path, { body: { at: 999 } }), "invalid_request");
    expectError(await request(server, "POST", path, { body: { at: 0 } }), "invalid_request");
    await source.end();
    const ended = (await journalOf(server.db.sql, source.id)).at(-1)!;
    expectError(await request(server, "POST", path, { body: { at: Number(ended.seq) } }), "invalid_request");
    expectError(
      await request(server, "POST", `/v1/sessions/${crypto.randomUUID()}/fork`, { body: { at: 1 } }),
      "not_found",
    );
  });
});
