import type { Brain } from "@aexhq/brain";
import { tool } from "@aexhq/brain";
import { expect } from "vitest";
import { z } from "zod";
import { scripted } from "./turns.js";
import { until } from "./wait.js";

// The hot path as a real server runs it, for the tests that read its statements' plans: on one
// Postgres (server/test/scaling/hot-path-sessions.test.ts) and on a Citus cluster
// (server/test/scaling/citus-plans.citus.test.ts).

/** Statements allowed to touch several sessions' rows, and why. */
export const CROSS_SESSION: { match: RegExp; why: string }[] = [
  {
    match: /FROM "brain"\."write_inputs"\(/,
    why: "the journal writer's batch: one statement per kind for all the sessions of one commit, each input row keyed by its session (db/src/writer/merge.ts)",
  },
  {
    match: /WHERE host_id = \$\d+ AND state = 'pending' AND executor = 'host'/,
    why: "a host connection claims the pending calls of the sessions it serves (dispatch.ts claimPendingCalls)",
  },
  {
    match: /FROM "brain"\."host_connections" hc JOIN "brain"\."servers"/,
    why: "a replica of a named host claims its fair share of the host's calls (named-hosts.ts)",
  },
  {
    match: /^WITH c AS \( UPDATE "brain"\."calls" SET state = 'ended'/,
    why: "ending calls by a filter (end-calls.ts): one session's at its end or cancel, but a lost connection's, a dead server's and the deadline sweep's span sessions",
  },
  {
    match: /^WITH t AS \( DELETE FROM "brain"\."tool_model_calls" m WHERE NOT EXISTS/,
    why: "the recovery sweep ends the model calls of tools whose runner stopped, whatever their session (tool-model-calls.ts)",
  },
  {
    match:
      /^SELECT s\.id FROM "brain"\."sessions" s WHERE s\.status = 'active' AND \(s\.owner_id IS NULL OR NOT EXISTS/,
    why: "the orphan sweep: active sessions without a live owner, to resume after a crash (ownership.ts orphanedSessions)",
  },
  {
    match: /status = 'ended' AND (s\.)?ended_at < now\(\)/,
    why: "retention: the sessions ended longer ago than BRAIN_RETENTION_DAYS, and their records (retention.ts)",
  },
  {
    match: /^DELETE FROM "brain"\."(host_connections|servers|components|hosts)"/,
    why: "retention of shared rows (closed connections, stopped servers, unused components and hosts) once no session's call or tool uses them",
  },
];

/** A text turn, a turn whose tool emits and finishes, an approval, a cancelled call, an end. */
export async function hotPathWork(client: Brain): Promise<void> {
  const echo = tool({
    name: "echo",
    description: "Echoes.",
    input: z.object({ n: z.number() }),
    run: async (input, ctx) => {
      await ctx.emit("progress", { n: input.n });
      return ctx.finish({ n: input.n });
    },
  });
  const gated = tool({
    name: "gated",
    description: "Waits for a person.",
    input: z.object({ n: z.number() }),
    approval: "always",
    run: async (input, ctx) => ctx.finish({ n: input.n }),
  });
  const session = await client.sessions.create({
    model: scripted(
      { text: "hello" },
      { toolCalls: [{ name: "echo", input: { n: 1 } }] },
      { text: "echoed" },
      { toolCalls: [{ name: "gated", input: { n: 2 } }] },
      { text: "approved" },
    ),
    tools: [echo(), gated()],
  });
  await expect(session.send("hi")).resolves.toBe("hello");
  await expect(session.send("echo")).resolves.toBe("echoed");
  const turn = session.send("gate");
  const waiting = await until("a call waiting", async () => (await session.approvals())[0]);
  await session.approve(waiting.call);
  await expect(turn).resolves.toBe("approved");
  await session.end();
}
