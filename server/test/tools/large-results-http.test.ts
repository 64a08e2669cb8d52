// Results up to the activation's budget (1 MiB here) on the routes that do not use the host
// socket: tools served over HTTP (their callbacks) and HTTP Environment tools (the worker reads
// the answer's body). A ~900 KiB result is journaled intact on each; past the budget, the call
// ends `budget_exceeded`, refused and journaled, rather than `result_too_large` or staying open.
import { type BrainError, hostEnv, httpTool, tool, toolHandler } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startBrainWithWorker } from "../../../testkit/brain-with-worker.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { deferred } from "../../../testkit/wait.js";
import { githubEnv, journalOf, startFakeApi } from "../environments/environments-support.js";
import { serveApp } from "../http-tools/http-tools-harness.js";
import { bigText } from "./big-text.js";

const MiB = 1024 * 1024;
const TEXT = bigText(900 * 1024);

const overSeen = deferred<string>();
const served = [
  tool({ name: "big", description: "d", input: z.object({}), run: async () => ({ text: TEXT }) }),
  tool({
    name: "over",
    description: "d",
    input: z.object({}),
    run: async (_input, ctx) => {
      const code = await ctx.finish({ text: "x".repeat(4 * MiB) }).then(
        () => "resolved",
        (e: BrainError) => e.code,
      );
      overSeen.resolve(code);
    },
  }),
];

const stack = startedBeforeAll(() => startBrainWithWorker());
const app = startedBeforeAll(() =>
  serveApp(
    toolHandler(
      served.map((t) => t({ env: hostEnv({ name: "web" }) })),
      { brainUrl: stack.brain.url },
    ),
  ),
);
const api = startedBeforeAll(() =>
  startFakeApi((r) => (r.path === "/big" ? { json: { text: TEXT } } : { json: { text: "x".repeat(1.5 * MiB) } })),
);

async function run(tools: Parameters<typeof stack.client.sessions.create>[0]["tools"], name: string) {
  const session = await stack.client.sessions.create({
    model: { provider: "scripted", script: [{ toolCalls: [{ name, input: {} }] }, { text: "done" }] },
    tools,
  });
  expect(await session.send("go")).toBe("done");
  const journal = await journalOf(stack.brain.db.sql, session.id);
  return { journal, outcome: journal.find((r) => r.kind === "tool_call_ended")!.payload.outcome! };
}

const overHttp = (path: string) =>
  tool({
    name: "issue",
    description: "d",
    input: z.object({}),
    output: z.object({ text: z.string() }),
    implementation: () => ({ type: "http_json", method: "GET", path }),
  })({ env: githubEnv(api) });

describe("a tool served over HTTP", () => {
  it("a ~900 KiB result reaches the journal intact through its callback", async () => {
    const placed = served[0]!({ env: hostEnv({ name: "web", url: app.url }) });
    const { outcome } = await run([placed], "big");
    expect(outcome).toEqual({ status: "ok", value: { text: TEXT } });
  });

  it("a body past anything the budget admits ends the call budget_exceeded, and finish rejects", async () => {
    const placed = served[1]!({ env: hostEnv({ name: "web", url: app.url }) });
    const { journal, outcome } = await run([placed], "over");
    expect(await overSeen.promise).toBe("budget_exceeded");
    expect(outcome).toMatchObject({ status: "error", error: { code: "budget_exceeded" } });
    expect(journal.some((r) => r.kind === "emission_rejected")).toBe(true);
  });
});

describe("an HTTP Environment tool", () => {
  it("a ~900 KiB answer is journaled intact", async () => {
    const { outcome } = await run([overHttp("/big")], "issue");
    expect(outcome).toEqual({ status: "ok", value: { text: TEXT } });
  });

  it("an answer larger than the budget ends the call budget_exceeded, journaled", async () => {
    const { journal, outcome } = await run([overHttp("/huge")], "issue");
    expect(outcome).toMatchObject({ status: "error", error: { code: "budget_exceeded" } });
    expect(journal.find((r) => r.kind === "emission_rejected")?.payload).toMatchObject({
      kind: "tool_result",
      code: "budget_exceeded",
    });
  });
});

describe("a v1 httpTool (the body is the result)", () => {
  const v1 = (path: string) =>
    httpTool({ name: "v1", description: "d", input: z.object({}), url: `${api.url}${path}` });

  it("a ~900 KiB body is journaled intact", async () => {
    const { outcome } = await run([v1("/big")], "v1");
    expect(outcome).toEqual({ status: "ok", value: { text: TEXT } });
  });

  it("a body larger than the budget ends the call budget_exceeded", async () => {
    const { outcome } = await run([v1("/huge")], "v1");
    expect(outcome).toMatchObject({ status: "error", error: { code: "budget_exceeded" } });
  });
});
