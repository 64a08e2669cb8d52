// ctx.environments from a host tool, end to end: every operation, its journal record, what the
// session was authorised for, and secrecy of header values. A real server and worker, a local
// stand-in for the GitHub API, scripted models.

import { type PlacedTool, tool } from "@aexhq/brain";
import { ENVIRONMENT_OPERATIONS, type EnvironmentControl } from "@aexhq/brain-contracts";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { dumpSchemas } from "../../../testkit/api.js";
import { startBrainWithWorker } from "../../../testkit/brain-with-worker.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { callOutcomes, fetchIssue, githubEnv, journalOf, SECRET_TOKEN, startFakeApi } from "./environments-support.js";

const stack = startedBeforeAll(() => startBrainWithWorker());
const api = startedBeforeAll(() =>
  startFakeApi((r) => {
    const issue = /^\/repos\/aexhq\/brain\/issues\/(\d+)$/.exec(r.path);
    if (issue && Number(issue[1]) !== 404) return { json: { number: Number(issue[1]), auth: r.headers.authorization } };
    if (r.path === "/setup-ok") return { json: { ok: true } };
    if (r.path === "/setup-fail") return { status: 503, json: { message: "not today" } };
    return { status: 404, json: { message: "Not Found" } };
  }),
);

type Step = { op: string; name?: string; arg?: unknown };

/**
 * Credentials stay in the application: the model's script names them ("$extra"), the tool puts
 * the values in (as a real tool would read them from its own configuration).
 */
const CREDENTIALS: Record<string, string> = {
  $extra: "Bearer extra-secret-value-123",
  $rotated: "Bearer extra-secret-value-456",
};
function reveal(value: unknown): unknown {
  if (typeof value === "string") return CREDENTIALS[value] ?? value;
  if (Array.isArray(value)) return value.map(reveal);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, reveal(v)]));
  }
  return value;
}
type StepResult = { ok?: unknown; err?: string; message?: string };

/** A host tool that runs the given ctx.environments operations and finishes with their answers. */
const admin = tool({
  name: "admin",
  description: "Manage environments.",
  input: z.object({
    steps: z.array(z.object({ op: z.string(), name: z.string().optional(), arg: z.json().optional() })),
  }),
  run: async ({ steps }, ctx) => {
    const results: StepResult[] = [];
    for (const { op, name, arg: named } of steps as Step[]) {
      const arg = reveal(named);
      const envs = ctx.environments;
      try {
        const value =
          op === "list"
            ? await envs.list()
            : op === "get"
              ? await envs.get(name!)
              : op === "create"
                ? await envs.create(arg as never)
                : op === "update"
                  ? await envs.update(name!, arg as never)
                  : op === "setup"
                    ? await envs.setup(name!)
                    : op === "delete"
                      ? await envs.delete(name!)
                      : await envs.call(name!, arg as never);
        results.push({ ok: value ?? null });
      } catch (error) {
        const e = error as { code?: string; message: string };
        results.push({ err: e.code ?? "thrown", message: e.message });
      }
    }
    return ctx.finish({ results } as never);
  },
});

const ALL: EnvironmentControl = { operations: [...ENVIRONMENT_OPERATIONS] };

async function runAdmin(
  steps: Step[],
  options: { control?: EnvironmentControl; tools?: PlacedTool[]; after?: { name: string; input: unknown }[] } = {},
) {
  const script = [{ toolCalls: [{ name: "admin", input: { steps } as never }] }];
  if (options.after) script.push({ toolCalls: options.after as never });
  const session = await stack.client.sessions.create({
    model: { provider: "scripted", script: [...script, { text: "done" }] },
    tools: [admin(), ...(options.tools ?? [fetchIssue({ env: githubEnv(api), repository: "aexhq/brain" })])],
    ...(options.control ? { environmentControl: options.control } : {}),
  });
  expect(await session.send("go")).toBe("done");
  const [outcome] = await callOutcomes(stack.brain.db.sql, session.id);
  if (!outcome?.value) throw new Error(`admin ended ${JSON.stringify(outcome)}`);
  const results = (outcome!.value as { results: StepResult[] }).results;
  const journal = await journalOf(stack.brain.db.sql, session.id);
  return { sessionId: session.id, results, journal, ops: journal.filter((r) => r.kind === "environment_operation") };
}

const ISSUE = { type: "http_json", method: "GET", path: "/repos/aexhq/brain/issues/{number}" };

describe("ctx.environments", () => {
  it("lists, gets, creates, sets up, updates, calls and deletes, each journaled", async () => {
    const extraSecret = CREDENTIALS.$extra!;
    const rotated = CREDENTIALS.$rotated!;
    const setupsBefore = api.to("/setup-ok").length;
    const { results, ops, journal } = await runAdmin(
      [
        { op: "list" },
        { op: "get", name: "github" },
        {
          op: "create",
          arg: {
            name: "extra",
            baseUrl: api.url,
            headers: { authorization: "$extra" },
            setup: { method: "POST", path: "/setup-ok" },
          },
        },
        { op: "setup", name: "extra" },
        { op: "update", name: "extra", arg: { headers: { authorization: "$rotated" } } },
        { op: "call", name: "extra", arg: { descriptor: ISSUE, input: { number: 9 } } },
        { op: "call", name: "extra", arg: { descriptor: ISSUE, input: { number: 404 } } },
        { op: "call", name: "extra", arg: { descriptor: ISSUE, input: {} } },
        { op: "delete", name: "extra" },
        { op: "get", name: "extra" },
        { op: "create", arg: { name: "github", baseUrl: api.url } },
        { op: "create", arg: { name: "application", baseUrl: api.url } },
      ],
      { control: ALL },
    );
    const github = {
      type: "http",
      name: "github",
      baseUrl: api.url,
      headerNames: ["authorization", "x-github-api-version"],
      setup: null,
      grants: { model: false },
      status: "ready",
      setupError: null,
    };
    const extra = {
      ...github,
      name: "extra",
      headerNames: ["authorization"],
      setup: { method: "POST", path: "/setup-ok" },
    };
    expect(results).toEqual([
      { ok: [github] },
      { ok: github },
      { ok: { ...extra, status: "new" } },
      { ok: extra },
      { ok: { ...extra, status: "new" } },
      // Changed, so set up again before the call; the call carries the new header (and never shows it).
      { ok: { number: 9, auth: "[redacted]" } },
      { err: "http_error", message: expect.stringContaining("HTTP 404") },
      { err: "invalid_input", message: expect.stringContaining('"number"') },
      { ok: null },
      { err: "environment_not_found", message: expect.any(String) },
      { err: "environment_exists", message: expect.any(String) },
      { err: "environment_exists", message: expect.stringContaining("host") },
    ]);
    const setups = api.to("/setup-ok").slice(setupsBefore);
    expect(setups.map((s) => s.headers.authorization)).toEqual([extraSecret, rotated]);
    expect(api.seen.find((r) => r.path === "/repos/aexhq/brain/issues/9")!.headers.authorization).toBe(rotated);

    const call = journal.find(
      (r) => r.kind === "tool_call_started" && (r.payload as { tool?: string }).tool === "admin",
    )!;
    expect(
      ops.map((r) => [r.payload.operation, r.payload.name, r.payload.outcome?.status, r.payload.outcome?.error?.code]),
    ).toEqual([
      ["list", null, "ok", undefined],
      ["get", "github", "ok", undefined],
      ["create", "extra", "ok", undefined],
      ["setup", "extra", "ok", undefined],
      ["update", "extra", "ok", undefined],
      ["call", "extra", "ok", undefined],
      ["call", "extra", "error", "http_error"],
      ["call", "extra", "error", "invalid_input"],
      ["delete", "extra", "ok", undefined],
      ["get", "extra", "error", "environment_not_found"],
      ["create", "github", "error", "environment_exists"],
      ["create", "application", "error", "environment_exists"],
    ]);
    for (const r of ops) expect(r.payload.call).toBe(call.seq);
    expect(ops[5]!.payload.value).toEqual({ number: 9, auth: "[redacted]" });
    const everything = await dumpSchemas(stack.brain.db.sql, ["brain", "brain_boss"]);
    for (const secret of [extraSecret, rotated, "extra-secret-value", SECRET_TOKEN]) {
      expect(everything).not.toContain(secret);
    }
  });

  it("a failed setup fails every call without retry; an explicit setup or an update runs it again", async () => {
    const failsBefore = api.to("/setup-fail").length;
    const oksBefore = api.to("/setup-ok").length;
    const { results } = await runAdmin(
      [
        { op: "create", arg: { name: "flaky", baseUrl: api.url, setup: { method: "POST", path: "/setup-fail" } } },
        { op: "call", name: "flaky", arg: { descriptor: ISSUE, input: { number: 1 } } },
        { op: "call", name: "flaky", arg: { descriptor: ISSUE, input: { number: 2 } } },
        { op: "setup", name: "flaky" },
        { op: "update", name: "flaky", arg: { setup: { method: "POST", path: "/setup-ok" } } },
        { op: "call", name: "flaky", arg: { descriptor: ISSUE, input: { number: 3 } } },
      ],
      { control: ALL },
    );
    expect(results[1]).toMatchObject({ err: "setup_failed", message: expect.stringContaining("HTTP 503") });
    expect(results[2]).toMatchObject({ err: "setup_failed" });
    expect(results[3]).toMatchObject({ ok: { status: "failed", setupError: expect.stringContaining("not today") } });
    expect(results[4]).toMatchObject({ ok: { status: "new" } });
    expect(results[5]).toEqual({ ok: { number: 3 } });
    // Once for the first call (the second found it failed), once more when asked explicitly.
    expect(api.to("/setup-fail").length - failsBefore).toBe(2);
    expect(api.to("/setup-ok").length - oksBefore).toBe(1);
  });

  it("a placed tool whose Environment was deleted fails with setup_failed", async () => {
    const { sessionId, results } = await runAdmin([{ op: "delete", name: "github" }], {
      control: ALL,
      after: [{ name: "fetch_issue", input: { number: 1 } }],
    });
    expect(results).toEqual([{ ok: null }]);
    const [, fetched] = await callOutcomes(stack.brain.db.sql, sessionId);
    expect(fetched).toMatchObject({ status: "error", error: { code: "setup_failed" } });
    expect(fetched!.error!.message).toContain("not found");
    const [secrets] = await stack.brain.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM brain.session_secrets WHERE session_id = ${sessionId}`;
    expect(secrets!.n).toBe(0);
  });
});

describe("authorisation", () => {
  it("denies everything to a session created without environmentControl, and journals the refusal", async () => {
    const { results, ops } = await runAdmin([{ op: "list" }, { op: "get", name: "github" }]);
    expect(results.map((r) => r.err)).toEqual(["environment_denied", "environment_denied"]);
    expect(ops.map((r) => [r.payload.operation, r.payload.outcome?.error?.code])).toEqual([
      ["list", "environment_denied"],
      ["get", "environment_denied"],
    ]);
  });

  it("denies operations the session was not given", async () => {
    const { results } = await runAdmin(
      [
        { op: "get", name: "github" },
        { op: "create", arg: { name: "new1", baseUrl: api.url } },
        { op: "delete", name: "github" },
        { op: "call", name: "github", arg: { descriptor: ISSUE, input: { number: 1 } } },
      ],
      { control: { operations: ["list", "get"] } },
    );
    expect(results[0]).toMatchObject({ ok: { name: "github" } });
    expect(results.slice(1).map((r) => r.err)).toEqual([
      "environment_denied",
      "environment_denied",
      "environment_denied",
    ]);
  });

  it("limits every operation to the listed environment names", async () => {
    const other = tool({
      name: "other",
      description: "d",
      input: z.object({ number: z.number() }),
      implementation: () => ISSUE,
    });
    const { results, ops } = await runAdmin(
      [
        { op: "list" },
        { op: "get", name: "other" },
        { op: "call", name: "other", arg: { descriptor: ISSUE, input: { number: 1 } } },
        { op: "create", arg: { name: "new2", baseUrl: api.url } },
        { op: "call", name: "github", arg: { descriptor: ISSUE, input: { number: 1 } } },
      ],
      {
        control: { operations: [...ENVIRONMENT_OPERATIONS], environments: ["github"] },
        tools: [
          fetchIssue({ env: githubEnv(api), repository: "aexhq/brain" }),
          other({ env: githubEnv(api, { name: "other", headers: {} }) }),
        ],
      },
    );
    expect((results[0]!.ok as { name: string }[]).map((v) => v.name)).toEqual(["github"]);
    expect(results.slice(1, 4).map((r) => r.err)).toEqual([
      "environment_denied",
      "environment_denied",
      "environment_denied",
    ]);
    expect(results[4]).toEqual({ ok: { number: 1, auth: "[redacted]" } });
    expect(ops).toHaveLength(5);
  });
});
