// Finding 6 of the tenant review: a tool allowed only `update` could move an Environment to
// another origin and keep its sealed headers (the next call carried `authorization` there), and
// could switch on `grants`. Moved to another origin, an Environment now keeps neither unless the
// update gives them again, and grants change only where environmentControl names `grant`.
import { type PlacedTool, tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startBrainWithWorker } from "../../../testkit/brain-with-worker.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import {
  callOutcomes,
  fetchIssue,
  githubEnv,
  SECRET_TOKEN,
  startFakeApi,
} from "../environments/environments-support.js";

const stack = startedBeforeAll(() => startBrainWithWorker());
const home = startedBeforeAll(() => startFakeApi(() => ({ json: { number: 1 } })));
const elsewhere = startedBeforeAll(() => startFakeApi(() => ({ json: { number: 1 } })));

type Step = { op: "create" | "update"; name: string; arg: Record<string, unknown> };

/** A tool that runs ctx.environments steps and finishes with each one's code ("ok" or the refusal). */
const admin = tool({
  name: "admin",
  description: "Changes Environments.",
  input: z.object({ steps: z.array(z.any()) }),
  run: async ({ steps }, ctx) => {
    const codes: string[] = [];
    for (const step of steps as Step[]) {
      const run =
        step.op === "create"
          ? ctx.environments.create({ name: step.name, ...step.arg } as never)
          : ctx.environments.update(step.name, step.arg as never);
      await run.then(
        () => codes.push("ok"),
        (e: { code?: string }) => codes.push(e.code ?? "thrown"),
      );
    }
    return ctx.finish({ codes } as never);
  },
});

async function run(
  steps: Step[],
  operations: string[],
  after: PlacedTool[] = [],
  afterCalls: { name: string; input: unknown }[] = [],
) {
  const session = await stack.client.sessions.create({
    model: {
      provider: "scripted",
      script: [
        { toolCalls: [{ name: "admin", input: { steps } as never }] },
        ...(afterCalls.length > 0 ? [{ toolCalls: afterCalls as never }] : []),
        { text: "done" },
      ],
    },
    tools: [admin(), fetchIssue({ env: githubEnv(home), repository: "aexhq/brain" }), ...after],
    environmentControl: { operations: operations as never },
  });
  expect(await session.send("go")).toBe("done");
  const outcomes = await callOutcomes(stack.brain.db.sql, session.id);
  return { codes: (outcomes[0]!.value as { codes: string[] }).codes, outcomes };
}

describe("an Environment's authority", () => {
  it("stays at its origin: moved elsewhere, it carries none of its sealed headers", async () => {
    const { codes, outcomes } = await run(
      [{ op: "update", name: "github", arg: { baseUrl: elsewhere.url } }],
      ["update"],
      [],
      [{ name: "fetch_issue", input: { number: 1 } }],
    );
    expect(codes).toEqual(["ok"]);
    expect(outcomes[1]?.status).toBe("ok");
    const [moved] = elsewhere.to("/repos/aexhq/brain/issues/1");
    expect(moved?.headers.authorization).toBeUndefined();
    expect(JSON.stringify(elsewhere.seen)).not.toContain(SECRET_TOKEN);
  });

  it("keeps its headers on a move within its origin, and takes new ones given with a move", async () => {
    const { codes, outcomes } = await run(
      [
        { op: "update", name: "github", arg: { baseUrl: `${home.url}/` } },
        {
          op: "update",
          name: "github",
          arg: { baseUrl: elsewhere.url, headers: { authorization: "Bearer given-anew" } },
        },
      ],
      ["update"],
      [],
      [{ name: "fetch_issue", input: { number: 1 } }],
    );
    expect(codes).toEqual(["ok", "ok"]);
    expect(outcomes[1]?.status).toBe("ok");
    expect(elsewhere.seen.at(-1)?.headers.authorization).toBe("Bearer given-anew");
  });

  it("gains grants only where environmentControl names grant", async () => {
    const grantModel = { grants: { model: true } };
    const without = await run(
      [
        { op: "update", name: "github", arg: grantModel },
        { op: "create", name: "other", arg: { baseUrl: home.url, ...grantModel } },
        { op: "update", name: "github", arg: { grants: { model: false } } },
      ],
      ["update", "create"],
    );
    expect(without.codes).toEqual(["environment_denied", "environment_denied", "ok"]);
    const granted = await run(
      [
        { op: "update", name: "github", arg: grantModel },
        { op: "create", name: "other", arg: { baseUrl: home.url, ...grantModel } },
      ],
      ["update", "create", "grant"],
    );
    expect(granted.codes).toEqual(["ok", "ok"]);
  });
});
