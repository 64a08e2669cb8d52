// ctx.environments.call results are emissions of the calling tool: they count against the
// activation's BRAIN_MAX_EMITTED_BYTES, and the one that would pass it is refused and journaled as
// emission_rejected, like any emission.
import { tool } from "@aexhq/brain";
import { expect, it } from "vitest";
import { z } from "zod";
import { startBrainWithWorker } from "../../../testkit/brain-with-worker.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { githubEnv, journalOf, startFakeApi } from "./environments-support.js";

const BUDGET = 1500;
const stack = startedBeforeAll(() => startBrainWithWorker({ BRAIN_MAX_EMITTED_BYTES: String(BUDGET) }));
const api = startedBeforeAll(() =>
  startFakeApi((r) => (r.path === "/big" ? { json: { blob: "x".repeat(2000) } } : { json: { small: 1 } })),
);

const get = (path: string) => ({ descriptor: { type: "http_json", method: "GET", path }, input: {} });

const caller = tool({
  name: "caller",
  description: "Calls its Environment three times.",
  input: z.object({}),
  run: async (_input, ctx) => {
    const results: unknown[] = [];
    for (const path of ["/small", "/big", "/small"]) {
      try {
        results.push(await ctx.environments.call("github", get(path)));
      } catch (error) {
        results.push((error as { code: string }).code);
      }
    }
    return ctx.finish({ results } as never);
  },
});

it("charges call results to the activation's emission budget and refuses the one that would pass it", async () => {
  const session = await stack.client.sessions.create({
    model: { provider: "scripted", script: [{ toolCalls: [{ name: "caller", input: {} }] }, { text: "done" }] },
    tools: [
      caller(),
      tool({ name: "t", description: "d", input: z.object({}), implementation: () => get("/") })({
        env: githubEnv(api),
      }),
    ],
    environmentControl: { operations: ["call"] },
  });
  expect(await session.send("go")).toBe("done");
  const journal = await journalOf(stack.brain.db.sql, session.id);
  const ended = journal.find((r) => r.kind === "tool_call_ended")!;
  expect(ended.payload.outcome).toEqual({
    status: "ok",
    value: { results: [{ small: 1 }, "budget_exceeded", { small: 1 }] },
  });
  const own = journal.filter((r) => r.kind === "environment_operation" || r.kind === "emission_rejected");
  expect(own.map((r) => r.kind)).toEqual(["environment_operation", "emission_rejected", "environment_operation"]);
  expect(own[1]!.payload).toMatchObject({ kind: "environment_operation", code: "budget_exceeded" });
  // The request was made (its effect happened); only its record was refused.
  expect(api.to("/big")).toHaveLength(1);
  const [budget] = await stack.brain.db.sql<{ emitted_bytes: number }[]>`
    SELECT emitted_bytes FROM brain.activation_budgets WHERE session_id = ${session.id}`;
  expect(Number(budget!.emitted_bytes)).toBeLessThanOrEqual(BUDGET);
  expect(Number(budget!.emitted_bytes)).toBeGreaterThan(0);
});
