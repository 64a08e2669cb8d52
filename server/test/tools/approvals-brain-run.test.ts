// Approval gates on tools Brain runs itself (an HTTP Environment's tool here; components and tools
// served over HTTP take the same path through a worker): the call waits with no worker job; once
// approved, its job commits with the approval and the worker runs it once, with the edited input
// when there is one; denied, nothing reaches the API. A predicate cannot gate such a tool: it is
// asked by a host, and Brain is the one running it.
import { tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { expectError, request } from "../../../testkit/api.js";
import { startBrainWithWorker } from "../../../testkit/brain-with-worker.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { until } from "../../../testkit/wait.js";
import { githubEnv, journalOf, startFakeApi } from "../environments/environments-support.js";

const stack = startedBeforeAll(() => startBrainWithWorker());
const api = startedBeforeAll(() => startFakeApi((r) => ({ status: 201, json: { created: JSON.parse(r.body) } })));

const createIssue = tool({
  name: "create_issue",
  description: "Opens an issue.",
  input: z.object({ owner: z.string(), repo: z.string(), title: z.string() }),
  approval: "always",
  implementation: () => ({ type: "http_json", method: "POST", path: "/repos/{owner}/{repo}/issues" }),
});

async function waitingTurn(title: string) {
  const session = await stack.client.sessions.create({
    model: {
      provider: "scripted",
      script: [{ toolCalls: [{ name: "create_issue", input: { owner: "o", repo: "r", title } }] }, { text: "done" }],
    },
    tools: [createIssue({ env: githubEnv(api) })],
  });
  const turn = session.send("file it");
  const waiting = await until("the call to wait", async () => (await session.approvals())[0]);
  return { session, turn, waiting };
}

async function jobsOf(sessionId: string, seq: number): Promise<number> {
  const [row] = await stack.brain.db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM brain_boss.job
    WHERE name = 'brain-calls' AND data->>'sessionId' = ${sessionId} AND (data->>'seq')::int = ${seq}`;
  return row!.n;
}

describe("an approval gate on a tool Brain runs", () => {
  it("waits with no worker job; approved with edited input, the worker runs the edited input once", async () => {
    const before = api.seen.length;
    const { session, turn, waiting } = await waitingTurn("rm -rf /");
    expect(await jobsOf(session.id, waiting.call)).toBe(0);
    const [row] = await stack.brain.db.sql<{ state: string; executor: string }[]>`
      SELECT state, executor FROM brain.calls WHERE session_id = ${session.id} AND seq = ${waiting.call}`;
    expect(row).toEqual({ state: "awaiting", executor: "worker" });
    expect(api.seen.length).toBe(before);

    await session.approve(waiting.call, { input: { owner: "o", repo: "r", title: "a safe title" } });
    await expect(turn).resolves.toBe("done");
    // Its one job was committed with the approval.
    expect(await jobsOf(session.id, waiting.call)).toBe(1);
    const sent = api.seen.slice(before);
    expect(sent.map((r) => [r.method, r.path, JSON.parse(r.body)])).toEqual([
      ["POST", "/repos/o/r/issues", { title: "a safe title" }],
    ]);
    const ended = (await journalOf(stack.brain.db.sql, session.id)).find((r) => r.kind === "tool_call_ended")!;
    expect(ended.payload.outcome).toEqual({ status: "ok", value: { created: { title: "a safe title" } } });
  });

  it("denied, it never reaches the API", async () => {
    const before = api.seen.length;
    const { session, turn, waiting } = await waitingTurn("spam");
    await session.deny(waiting.call, { reason: "no" });
    await expect(turn).resolves.toBe("done");
    expect(api.seen.length).toBe(before);
    expect(await jobsOf(session.id, waiting.call)).toBe(0);
  });

  it("refuses a predicate on it at session creation", async () => {
    const placed = createIssue({ env: githubEnv(api) }).placement;
    const body = {
      model: { provider: "scripted", script: [] },
      tools: [{ ...placed, approval: "predicate" }],
      environments: [{ type: "http", name: "github", baseUrl: api.url }],
    };
    expectError(await request(stack.brain, "POST", "/v1/sessions", { body }), "invalid_request");
  });
});
