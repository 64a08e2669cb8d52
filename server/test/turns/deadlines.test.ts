import { type ToolContext, tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { postMessage } from "../../../testkit/api.js";
import type { InProcessBrain } from "../../../testkit/brain.js";
import { serversOnDemand } from "../../../testkit/tool-harness.js";
import { scripted } from "../../../testkit/turns.js";
import { until } from "../../../testkit/wait.js";

const setup = serversOnDemand();

/** A tool that waits for its signal and then tries to publish anyway. */
function stubborn(timeoutMs: number | undefined, seen: { ctx?: ToolContext; late?: unknown; reason?: unknown }) {
  return tool({
    name: "stubborn",
    description: "Ignores its deadline.",
    input: z.object({}),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    run: async (_input, ctx) => {
      seen.ctx = ctx as ToolContext;
      await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
      seen.reason = ctx.signal.reason;
      seen.late = await ctx.emitResult({ late: true }).catch((e: unknown) => e);
    },
  });
}

async function callRow(brain: InProcessBrain, sessionId: string) {
  const [row] = await brain.db.sql<
    { status: string; outcome: { status: string; cause?: string } | null; deadline_at: Date | null }[]
  >`
    SELECT status, outcome, deadline_at FROM tool_calls WHERE session_id = ${sessionId}`;
  return row;
}

describe("deadlines", () => {
  it("expiry records timeout, fires the host's signal, and refuses the late result", async () => {
    const { brain, client } = await setup();
    const seen: { ctx?: ToolContext; late?: unknown; reason?: unknown } = {};
    const session = await client.sessions.create({
      model: scripted({ toolCalls: [{ name: "stubborn", input: {} }] }, { text: "gave up" }),
      tools: [stubborn(300, seen)()],
    });
    expect(await session.send("go")).toBe("gave up");
    const row = await callRow(brain, session.id);
    expect(row).toMatchObject({ status: "ended", outcome: { status: "timeout", cause: "deadline" } });
    const [late] = await brain.db.sql<{ ms: number }[]>`
      SELECT (extract(epoch FROM ended_at - deadline_at) * 1000)::float8 AS ms FROM tool_calls WHERE session_id = ${session.id}`;
    expect(late!.ms).toBeGreaterThanOrEqual(0);
    console.log(`deadline precision: the timeout was recorded ${late!.ms.toFixed(1)} ms after the deadline`);
    await until("the expected state", async () => seen.late !== undefined);
    expect(seen.reason).toMatchObject({ details: { status: "timeout" } });
    expect(seen.late).toBeInstanceOf(Error);
    const [results] = await brain.db
      .sql`SELECT count(*)::int AS n FROM journal WHERE session_id = ${session.id} AND kind = 'tool_result'`;
    expect(results!.n).toBe(0);
  });

  it("the tool's own limit is bounded by BRAIN_MAX_TOOL_SECS; 0 with no tool limit is unlimited", async () => {
    const bounded = await setup({ BRAIN_MAX_TOOL_SECS: "1" });
    const seen: { ctx?: ToolContext } = {};
    const s1 = await bounded.client.sessions.create({
      model: scripted({ toolCalls: [{ name: "stubborn", input: {} }] }, { text: "x" }),
      tools: [stubborn(60_000, seen)()],
    });
    await s1.send("go");
    const [limit] = await bounded.brain.db.sql<{ ms: number }[]>`
      SELECT (extract(epoch FROM deadline_at - started_at) * 1000)::float8 AS ms FROM tool_calls WHERE session_id = ${s1.id}`;
    expect(limit!.ms).toBeLessThanOrEqual(1_000);
    expect(limit!.ms).toBeGreaterThan(900);
    expect(seen.ctx!.deadline).toBe(Math.round(seen.ctx!.deadline!));

    const unlimited = await setup({ BRAIN_MAX_TOOL_SECS: "0" });
    const seen2: { ctx?: ToolContext } = {};
    const s2 = await unlimited.client.sessions.create({
      model: scripted({ toolCalls: [{ name: "stubborn", input: {} }] }),
      tools: [stubborn(undefined, seen2)()],
    });
    await postMessage(unlimited.brain, s2.id, "go");
    await until("the expected state", async () => seen2.ctx);
    expect(seen2.ctx!.deadline).toBeUndefined();
    expect((await callRow(unlimited.brain, s2.id))!.deadline_at).toBeNull();
  });

  it("deadlines past 2^31-1 ms (about 24.8 days) are re-armed, not fired at once", async () => {
    const { brain, client } = await setup({ BRAIN_MAX_TOOL_SECS: "0" });
    const seen: { ctx?: ToolContext } = {};
    const forty = 40 * 24 * 3600 * 1000;
    const session = await client.sessions.create({
      model: scripted({ toolCalls: [{ name: "stubborn", input: {} }] }, { text: "returned" }),
      tools: [stubborn(forty, seen)()],
    });
    await postMessage(brain, session.id, "go");
    await until("the expected state", async () => seen.ctx);
    expect(seen.ctx!.deadline! - Date.now()).toBeGreaterThan(forty - 60_000);
    // Give a wrongly armed (overflowed) timer every chance to fire.
    await new Promise((r) => setTimeout(r, 300));
    expect(seen.ctx!.signal.aborted).toBe(false);
    expect((await callRow(brain, session.id))!.status).toBe("running");
    await seen.ctx!.finish();
  });

  it("the durable backstop: with no Agentloop timer left, the pg-boss job still ends the call at its deadline", async () => {
    const { brain, client } = await setup();
    const seen: { ctx?: ToolContext; late?: unknown; reason?: unknown } = {};
    const session = await client.sessions.create({
      model: scripted({ toolCalls: [{ name: "stubborn", input: {} }] }, { text: "x" }),
      tools: [stubborn(1_500, seen)()],
    });
    await postMessage(brain, session.id, "go");
    await until("the expected state", async () => seen.ctx);
    // The in-process timers live in the session's actor; stopping it removes them, as a crash would.
    brain.app.brain.actors.get(session.id)!.stop("shutdown");
    const row = await until("the expected state", async () => {
      const r = await callRow(brain, session.id);
      return r?.status === "ended" ? r : undefined;
    });
    expect(row.outcome).toEqual({ status: "timeout", cause: "deadline" });
    const [job] = await brain.db.sql`SELECT count(*)::int AS n FROM brain_boss.job WHERE name = 'brain-deadlines'`;
    expect(job!.n).toBeGreaterThan(0);
  });

  it("async input validation consumes the deadline: the handler never runs", async () => {
    const { brain, client } = await setup();
    let ran = false;
    const slowCheck = tool({
      name: "slow_check",
      description: "Its input check takes longer than its deadline.",
      input: z.object({ id: z.string() }).refine(async () => {
        await new Promise((r) => setTimeout(r, 600));
        return true;
      }),
      timeoutMs: 200,
      run: async () => {
        ran = true;
        return "ran";
      },
    });
    const session = await client.sessions.create({
      model: scripted({ toolCalls: [{ name: "slow_check", input: { id: "1" } }] }, { text: "after" }),
      tools: [slowCheck()],
    });
    expect(await session.send("go")).toBe("after");
    await new Promise((r) => setTimeout(r, 700));
    expect(ran).toBe(false);
    expect((await callRow(brain, session.id))!.outcome).toMatchObject({ status: "timeout" });
  });
});
