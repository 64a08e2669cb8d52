import { Brain, type ToolContext, tool } from "@aexhq/brain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type SpawnedBrain, spawnBrain } from "../../testkit/brain.js";
import { scripted } from "../../testkit/turns.js";
import { until } from "../../testkit/wait.js";
import { brain, json, spawnBrainCli } from "./support.js";

// Commands through the HTTP API (sessions, calls cancel) and calls ls, against a server process.
let server: SpawnedBrain;
let client: Brain;
let env: Record<string, string>;
beforeAll(async () => {
  server = await spawnBrain();
  client = new Brain({ url: server.url, token: server.token });
  env = { DATABASE_URL: server.db.url, BRAIN_URL: server.url, BRAIN_TOKEN: server.token };
});
afterAll(async () => {
  await client?.close();
  await server?.close();
});

/** A tool that hands its context to the test and stays open until cancelled or finished. */
function heldTool(held: { ctx?: ToolContext }) {
  return tool({
    name: "held",
    description: "Reports progress while the test drives it.",
    input: z.object({}),
    run: async (_input, ctx) => {
      held.ctx = ctx as ToolContext;
    },
  });
}

async function sessionWithOpenCall() {
  const held: { ctx?: ToolContext } = {};
  const session = await client.sessions.create({
    model: scripted({ toolCalls: [{ name: "held", input: {} }] }, { text: "returned" }),
    tools: [heldTool(held)()],
  });
  expect(await session.send("go")).toBe("returned");
  await until("the tool's context", () => held.ctx);
  return { session, ctx: held.ctx! };
}

describe("brain sessions", () => {
  it("ls and show list the session; tail follows the journal live, tool progress included, until it ends", async () => {
    const { session, ctx } = await sessionWithOpenCall();
    const ls = await brain(["sessions", "ls"], env);
    expect(ls.code).toBe(0);
    expect(ls.output).toMatch(/^ID\s+STATUS\s+RECORDS/m);
    expect(ls.output).toMatch(new RegExp(`^${session.id}\\s+active`, "m"));
    const lsJson = json<{ id: string }[]>(await brain(["sessions", "ls", "--json"], env));
    expect(lsJson.map((s) => s.id)).toContain(session.id);

    const show = await brain(["sessions", "show", session.id], env);
    expect(show.code).toBe(0);
    expect(show.output).toMatch(/^status:\s+active$/m);
    expect(show.output).toMatch(/tool_call_started/);

    const tail = spawnBrainCli(["sessions", "tail", session.id], env);
    await tail.waitForLine(/^\s+1\s+\S+\s+session_created\b/m);
    // Live: a record committed after the tail started reaches it.
    await ctx.emit("progress", { step: "half way" });
    await tail.waitForLine(/^\s+\d+\s+\S+\s+progress\s+.*half way/m);
    await session.end();
    expect((await tail.exited).code).toBe(0);

    const raw = await brain(["sessions", "tail", session.id, "--json", "--after", "1"], env);
    const kinds = raw.output
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { kind: string }).kind);
    expect(kinds).toContain("progress");
    expect(kinds).not.toContain("session_created");
    const missing = await brain(["sessions", "show", "00000000-0000-4000-8000-000000000000"], env);
    expect(missing.code).toBe(1);
    expect(missing.output).toMatch(/404 not_found/);
  });

  it("fails with exit 1 without a token or a reachable server", async () => {
    const noToken = await brain(["sessions", "ls"], { ...env, BRAIN_TOKEN: "" });
    expect(noToken.code).toBe(1);
    expect(noToken.output).toMatch(/no token: set BRAIN_TOKEN/);
    const down = await brain(["sessions", "ls"], { ...env, BRAIN_URL: "http://127.0.0.1:1" });
    expect(down.code).toBe(1);
    expect(down.output).toMatch(/cannot reach Brain at http:\/\/127.0.0.1:1/);
    expect((await brain(["sessions", "show"], env)).code).toBe(2);
  });
});

describe("brain calls", () => {
  it("ls --open lists an open call; cancel ends it through the API (the tool's signal fires); it is then no longer open", async () => {
    const { session, ctx } = await sessionWithOpenCall();
    const seq = ctx.sequence;
    const open = json<{ session_id: string; seq: number; status: string }[]>(
      await brain(["calls", "ls", "--open", "--json"], env),
    );
    expect(open).toContainEqual(expect.objectContaining({ session_id: session.id, seq, status: "returned" }));
    const table = await brain(["calls", "ls", "--open"], env);
    expect(table.output).toMatch(new RegExp(`^${session.id}\\s+${seq}\\s+held\\s+returned`, "m"));

    const cancelled = await brain(["calls", "cancel", session.id, String(seq)], env);
    expect(cancelled.code).toBe(0);
    expect(cancelled.output).toMatch(new RegExp(`^cancelled call ${seq} \\(record \\d+\\)$`, "m"));
    await until("the tool's signal", () => ctx.signal.aborted);
    const [row] = await server.db.sql`SELECT outcome FROM calls WHERE session_id = ${session.id} AND seq = ${seq}`;
    expect(row?.outcome).toMatchObject({ status: "cancelled", cause: "sdk_cancel" });

    const after = json<{ session_id: string }[]>(await brain(["calls", "ls", "--open", "--json"], env));
    expect(after.filter((c) => c.session_id === session.id)).toEqual([]);
    const all = json<{ session_id: string; outcome: string }[]>(await brain(["calls", "ls", "--json"], env));
    expect(all).toContainEqual(expect.objectContaining({ session_id: session.id, outcome: "cancelled" }));
    const again = await brain(["calls", "cancel", session.id, String(seq), "--json"], env);
    expect(json(again)).toEqual({ cancelled: false, sequence: null });
    expect((await brain(["calls", "cancel", session.id, "999"], env)).code).toBe(1);
    expect((await brain(["calls", "cancel", session.id], env)).code).toBe(2);
  });
});

describe("brain approvals", () => {
  it("ls shows the waiting calls; approve (with edited input) and deny decide them through the API", async () => {
    const runs: unknown[] = [];
    const pay = tool({
      name: "pay",
      description: "Pays someone.",
      input: z.object({ to: z.string() }),
      approval: "always",
      run: async (input, ctx) => {
        runs.push(input);
        return ctx.finish({ paid: input.to });
      },
    });
    const session = await client.sessions.create({
      model: scripted(
        {
          toolCalls: [
            { name: "pay", input: { to: "mallory" } },
            { name: "pay", input: { to: "eve" } },
          ],
        },
        {
          text: "done",
        },
      ),
      tools: [pay()],
    });
    const turn = session.send("go");
    const waiting = await until("two calls waiting", async () => {
      const listed = json<{ call: number; tool: string; input: unknown }[]>(
        await brain(["approvals", "ls", session.id, "--json"], env),
      );
      return listed.length === 2 ? listed : undefined;
    });
    expect(waiting.map((w) => w.input)).toEqual([{ to: "mallory" }, { to: "eve" }]);
    const table = await brain(["approvals", "ls", session.id], env);
    expect(table.output).toMatch(new RegExp(`^${waiting[0]!.call}\\s+pay\\s+\\{"to":"mallory"\\}`, "m"));

    const approved = await brain(
      ["approvals", "approve", session.id, String(waiting[0]!.call), "--input", '{"to":"alice"}'],
      env,
    );
    expect(approved.output).toMatch(new RegExp(`^call ${waiting[0]!.call} approved \\(record \\d+\\)$`, "m"));
    const denied = await brain(
      ["approvals", "deny", session.id, String(waiting[1]!.call), "--reason", "unknown payee", "--json"],
      env,
    );
    expect(json(denied)).toMatchObject({ call: waiting[1]!.call, decision: "denied" });
    await expect(turn).resolves.toBe("done");
    expect(runs).toEqual([{ to: "alice" }]);

    expect((await brain(["approvals", "approve", session.id, String(waiting[1]!.call)], env)).code).toBe(1);
    expect((await brain(["approvals", "approve", session.id, "1", "--input", "not json"], env)).code).toBe(2);
    expect((await brain(["approvals", "deny", session.id], env)).code).toBe(2);
  });
});

describe("brain sessions fork", () => {
  it("forks a session at a sequence, with another model, and prints the fork", async () => {
    const session = await client.sessions.create({ model: scripted({ text: "first answer" }) });
    await session.send("hello");
    // After the first turn: the fork's next turn is its model's first.
    const at = (await client.sessions.get(session.id)).info.lastSequence;
    const model = JSON.stringify(scripted({ text: "other answer" }));
    const forked = await brain(
      ["sessions", "fork", session.id, "--at", String(at), "--model", model, "--system", "Be brief.", "--json"],
      env,
    );
    expect(forked.code).toBe(0);
    const fork = json<{ id: string; forkedFrom: unknown }>(forked);
    expect(fork.forkedFrom).toEqual({ session: session.id, sequence: at });
    const [created] = await server.db.sql<{ payload: { system?: string } }[]>`
      SELECT payload FROM brain.journal WHERE session_id = ${fork.id} AND seq = 1`;
    expect(created!.payload.system).toBe("Be brief.");
    await expect((await client.sessions.get(fork.id)).send("again")).resolves.toBe("other answer");
    const plain = await brain(["sessions", "fork", session.id, "--at", "1"], env);
    expect(plain.output).toMatch(new RegExp(`^[0-9a-f-]{36} \\(forked from ${session.id} at 1\\)$`, "m"));
    expect((await brain(["sessions", "fork", session.id], env)).code).toBe(2);
    expect((await brain(["sessions", "fork", session.id, "--at", "999"], env)).code).toBe(1);
  });
});
