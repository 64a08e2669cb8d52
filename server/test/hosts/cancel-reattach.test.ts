import { Brain, BrainError, type ToolContext, tool } from "@aexhq/brain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type SpawnedBrain, spawnBrain } from "../../../testkit/brain.js";
import { backgroundSession, scripted } from "../../../testkit/turns.js";
import { until } from "../../../testkit/wait.js";

let brain: SpawnedBrain;
beforeAll(async () => {
  brain = await spawnBrain();
});
afterAll(async () => {
  await brain?.close();
});

function waiter(entered: ToolContext[]) {
  return tool({
    name: "wait",
    description: "Waits for its signal, then tries to publish anyway.",
    input: z.object({ n: z.number() }),
    run: async (_input, ctx) => {
      entered.push(ctx as ToolContext);
      await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
      await ctx.emitResult("too late").catch(() => {});
    },
  });
}

describe("cancellation", () => {
  it("session.cancel() cancels the running turn: its calls end cancelled, signals fire, the turn ends cancelled", async () => {
    const client = new Brain({ url: brain.url, token: brain.token });
    try {
      const entered: ToolContext[] = [];
      const session = await client.sessions.create({
        model: scripted(
          {
            toolCalls: [
              { name: "wait", input: { n: 1 } },
              { name: "wait", input: { n: 2 } },
            ],
          },
          { text: "should not be reached" },
          { text: "next turn" },
        ),
        tools: [waiter(entered)()],
      });
      const answer = session.send("go");
      await until("the expected state", async () => entered.length === 2);
      await session.cancel();
      // A cancelled turn is not an empty answer: send rejects.
      await expect(answer).rejects.toMatchObject({ name: "BrainError", code: "turn_cancelled" });
      // The cancel frame comes on the host's socket, the answer on the client's: either may be first.
      await until("the calls' signals to fire", () => entered.every((ctx) => ctx.signal.aborted));
      for (const ctx of entered) expect(ctx.signal.reason).toMatchObject({ details: { status: "cancelled" } });
      const rows = await brain.db.sql`SELECT outcome FROM tool_calls WHERE session_id = ${session.id} ORDER BY seq`;
      expect(rows.map((r) => r.outcome)).toEqual([
        { status: "cancelled", cause: "turn_cancelled" },
        { status: "cancelled", cause: "turn_cancelled" },
      ]);
      const [ended] = await brain.db.sql`
        SELECT payload FROM journal WHERE session_id = ${session.id} AND kind = 'activation_ended'`;
      expect(ended!.payload).toMatchObject({ status: "cancelled" });
      const [results] = await brain.db.sql`
        SELECT count(*)::int AS n FROM journal WHERE session_id = ${session.id} AND kind = 'tool_result'`;
      expect(results!.n).toBe(0);
      // The model was not called for the cancelled round; the next turn uses the next step.
      expect(await session.send("again")).toBe("should not be reached");
    } finally {
      await client.close();
    }
  });

  it("cancelCall(sequence) cancels one call; the first terminal cause is kept", async () => {
    const client = new Brain({ url: brain.url, token: brain.token });
    try {
      const entered: ToolContext[] = [];
      const session = await client.sessions.create({
        model: scripted({ toolCalls: [{ name: "wait", input: { n: 1 } }] }, { text: "after cancel" }),
        tools: [waiter(entered)()],
      });
      const answer = session.send("go");
      await until("the expected state", async () => entered.length === 1);
      expect(await session.cancelCall(entered[0]!.sequence)).toBe(true);
      expect(await answer).toBe("after cancel");
      expect(await session.cancelCall(entered[0]!.sequence)).toBe(false);
      const [row] = await brain.db.sql`SELECT outcome FROM tool_calls WHERE session_id = ${session.id}`;
      expect(row!.outcome).toEqual({ status: "cancelled", cause: "sdk_cancel" });
      expect(entered[0]!.signal.aborted).toBe(true);
    } finally {
      await client.close();
    }
  });

  it("ending a session cancels its background tools and releases their handlers", async () => {
    const client = new Brain({ url: brain.url, token: brain.token });
    try {
      const { session, ctx: started } = await backgroundSession(client, []);
      const ctx = started();
      await session.end();
      await until("the expected state", async () => ctx.signal.aborted);
      const [row] = await brain.db.sql`SELECT outcome FROM tool_calls WHERE session_id = ${session.id}`;
      expect(row!.outcome).toEqual({ status: "cancelled", cause: "session_ended" });
      await expect(ctx.emit("x", {})).rejects.toBeInstanceOf(BrainError);
    } finally {
      await client.close();
    }
  });
});

describe("reattachment", () => {
  const lookup = tool({
    name: "lookup",
    description: "Look up one record.",
    input: z.object({ id: z.string() }),
    output: z.object({ value: z.string() }),
    run: async ({ id }) => ({ value: id }),
  });

  it("requires exactly the original tools with identical schemas, and says what differs", async () => {
    const first = new Brain({ url: brain.url, token: brain.token });
    const session = await first.sessions.create({ model: scripted(), tools: [lookup()] });
    const credentials = first.credentials()!;
    await first.close();

    const changed = tool({
      name: "lookup",
      description: "Look up one record.",
      input: z.object({ id: z.number() }),
      output: z.object({ value: z.string() }),
      run: async ({ id }) => ({ value: String(id) }),
    });
    const other = tool({ name: "other", description: "x", input: z.object({}), run: async () => null });
    const second = new Brain({ url: brain.url, token: brain.token, credentials });
    try {
      const wrongSchema = await second.sessions.get(session.id, { tools: [changed()] }).catch((e: unknown) => e);
      expect(wrongSchema).toMatchObject({ code: "tool_mismatch" });
      expect((wrongSchema as Error).message).toContain("lookup: input.properties.id.type");
      const extra = await second.sessions.get(session.id, { tools: [lookup(), other()] }).catch((e: unknown) => e);
      expect((extra as Error).message).toContain('unexpected tool "other"');
      const missing = await second.sessions.get(session.id, { tools: [] }).catch((e: unknown) => e);
      expect((missing as Error).message).toContain('missing tool "lookup"');
      // The original declaration reattaches.
      const handle = await second.sessions.get(session.id, { tools: [lookup()] });
      expect(handle.id).toBe(session.id);
    } finally {
      await second.close();
    }
  });
});
