// Finding 2 of the tenant review: a backtracking pattern in a tenant's JSON Schema stalled every
// tenant (`^(a|a)*$` against 48 a's and a b: ~2^48 steps on the shared event loop). Brain now runs
// tenants' patterns on RE2, in linear time, and bounds schemas where they are declared. Here the
// server and its worker share one process, as `npm start` runs them: on a backtracking engine this
// file's first test would never finish.
import { hostEnv, httpEnv, tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startBrainWithWorker } from "../../../testkit/brain-with-worker.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { callOutcomes, startFakeApi } from "../environments/environments-support.js";

const stack = startedBeforeAll(() => startBrainWithWorker());
const api = startedBeforeAll(() => startFakeApi(() => ({ json: { ok: true } })));

const descriptor = () => ({ type: "http_json", method: "GET", path: "/check" });
const scripted = (calls: { name: string; input: unknown }[]) => ({
  provider: "scripted" as const,
  script: [{ toolCalls: calls as never }, { text: "done" }],
});

const idle = { provider: "scripted" as const, script: [{ text: "idle" }] };

async function refusal(create: Promise<unknown>): Promise<string> {
  return create.then(
    () => "created",
    (e: { code?: string; message: string }) => `${e.code}: ${e.message}`,
  );
}

describe("tenant schemas", () => {
  it("check a catastrophic pattern in linear time, while another tenant's turn runs", async () => {
    const evil = tool({
      name: "evil",
      description: "Checks a string.",
      input: z.object({ s: z.string().regex(/^(a|a)*$/) }),
      implementation: descriptor,
    });
    const plain = tool({ name: "plain", description: "Plain.", input: z.object({}), implementation: descriptor });
    const [a, b] = await Promise.all([
      stack.client.sessions.create({
        model: scripted([{ name: "evil", input: { s: `${"a".repeat(48)}b` } }]),
        tools: [evil({ env: httpEnv({ name: "api", baseUrl: api.url }) })],
      }),
      stack.client.sessions.create({
        model: scripted([{ name: "plain", input: {} }]),
        tools: [plain({ env: httpEnv({ name: "api", baseUrl: api.url }) })],
      }),
    ]);
    const healthy = fetch(`${stack.brain.url}/healthz`).then((r) => r.status);
    expect(await Promise.all([a.send("go"), b.send("go"), healthy])).toEqual(["done", "done", 200]);
    const [refused] = await callOutcomes(stack.brain.db.sql, a.id);
    expect(refused?.error?.code).toBe("invalid_input");
    const [answered] = await callOutcomes(stack.brain.db.sql, b.id);
    expect(answered).toEqual({ status: "ok", value: { ok: true } });
    // The pattern still means what it says.
    const fine = await stack.client.sessions.create({
      model: scripted([{ name: "evil", input: { s: "a".repeat(10_000) } }]),
      tools: [evil({ env: httpEnv({ name: "api", baseUrl: api.url }) })],
    });
    expect(await fine.send("go")).toBe("done");
    expect((await callOutcomes(stack.brain.db.sql, fine.id))[0]?.status).toBe("ok");
  });

  it("refuses at creation a pattern RE2 cannot run where Brain alone checks the values", async () => {
    const lookahead = tool({
      name: "host_name",
      description: "Takes a hostname.",
      input: z.object({ name: z.hostname() }),
      implementation: descriptor,
    });
    expect(
      await refusal(
        stack.client.sessions.create({
          model: idle,
          tools: [lookahead({ env: httpEnv({ name: "api", baseUrl: api.url }) })],
        }),
      ),
    ).toMatch(/^invalid_request: host_name: its input schema has a pattern Brain cannot check in linear time/);
    // A host tool's SDK checks its own input with zod: its patterns are the application's.
    const hosted = tool({
      name: "host_name",
      description: "Takes a hostname.",
      input: z.object({ name: z.hostname() }),
      run: async () => null,
    });
    expect(await refusal(stack.client.sessions.create({ model: idle, tools: [hosted()] }))).toBe("created");
    expect(
      await refusal(
        stack.client.sessions.create({
          model: idle,
          tools: [hosted({ env: hostEnv({ name: "app", url: `${api.url}/tools` }) })],
        }),
      ),
    ).toBe("created");
  });

  it("refuses schemas too large or too deep at creation", async () => {
    const wide = tool({
      name: "wide",
      description: "Too large.",
      input: z.object({
        pick: z.enum(Array.from({ length: 20_000 }, (_, i) => `choice-${i}`) as [string, ...string[]]),
      }),
      run: async () => null,
    });
    expect(await refusal(stack.client.sessions.create({ model: idle, tools: [wide()] }))).toMatch(
      /^invalid_request: wide: its input schema is refused: it is \d+ bytes; at most 131072/,
    );
    let deep: z.ZodType = z.string();
    for (let i = 0; i < 60; i++) deep = z.array(deep);
    const nested = tool({
      name: "nested",
      description: "Too deep.",
      input: z.object({ v: deep }),
      run: async () => null,
    });
    expect(await refusal(stack.client.sessions.create({ model: idle, tools: [nested()] }))).toMatch(
      /^invalid_request: nested: its input schema is refused: it nests deeper than 48 levels/,
    );
  });
});
