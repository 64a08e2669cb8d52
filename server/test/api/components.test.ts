import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Brain, brainEnv, component, ERROR_CODES, tool } from "@aexhq/brain";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { testComponent } from "../../../testkit/components.js";

let brain: InProcessBrain;
let valid: Buffer;
beforeAll(async () => {
  [brain, valid] = await Promise.all([startBrain(), testComponent("script")]);
}, 120_000);
afterAll(async () => {
  await brain?.close();
});

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

async function put(bytes: Buffer, digest = sha(bytes)) {
  const res = await fetch(`${brain.url}/v1/components/${digest}`, {
    method: "PUT",
    headers: { authorization: `Bearer ${brain.token}`, "content-type": "application/wasm" },
    body: bytes,
  });
  return {
    status: res.status,
    body: (await res.json()) as { error?: { code: string; message: string }; wit?: string },
  };
}

async function stored(): Promise<number> {
  const [row] = await brain.db.sql`SELECT count(*)::int AS n FROM components`;
  return row!.n;
}

describe("component admission", () => {
  it("refuses what is not a component exporting brain:tool, and stores nothing of it", async () => {
    const before = await stored();
    const coreModule = Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
    const truncated = valid.subarray(0, 4096);
    for (const bytes of [Buffer.from("not wasm at all"), coreModule, truncated]) {
      const r = await put(bytes);
      expect(r.status).toBe(ERROR_CODES.invalid_component.http);
      expect(r.body.error?.code).toBe("invalid_component");
    }
    const mismatch = await put(valid, "0".repeat(64));
    expect(mismatch.body.error?.code).toBe("invalid_component");
    expect(mismatch.body.error?.message).toContain("SHA-256");
    expect(await stored()).toBe(before);
  });

  it("admits a component once, content-addressed", async () => {
    const first = await put(valid);
    expect(first.status).toBe(201);
    expect(first.body.wit).toContain("brain:tool/host@0.2.0");
    expect((await put(valid)).status).toBe(201);
    const head = await fetch(`${brain.url}/v1/components/${sha(valid)}`, {
      method: "HEAD",
      headers: { authorization: `Bearer ${brain.token}` },
    });
    expect(head.status).toBe(200);
    const [row] = await brain.db.sql`SELECT count(*)::int AS n FROM components WHERE sha256 = ${sha(valid)}`;
    expect(row!.n).toBe(1);
  });
});

describe("placements", () => {
  const inspectLike = (file: string) =>
    tool({
      name: "inspect",
      description: "Inspect one path.",
      input: z.object({ path: z.string() }),
      options: z.object({ depth: z.number().int().positive() }),
      implementation: component(pathToFileURL(file)),
    });

  it("the SDK uploads a component when a session is created, once per server, and caches only success", async () => {
    const dir = mkdtempSync(join(tmpdir(), "brain-comp-"));
    const file = join(dir, "tool.wasm");
    writeFileSync(file, Buffer.from("garbage"));
    const inspect = inspectLike(file);
    const requests: string[] = [];
    // The client's own fetch (BrainOptions.fetch): it keeps the fetch it was made with.
    const countingFetch: typeof fetch = (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      if (url.includes("/v1/components/")) requests.push(`${init?.method ?? "GET"}`);
      return fetch(input, init);
    };
    const client = new Brain({ url: brain.url, token: brain.token, fetch: countingFetch });
    try {
      const env = brainEnv({ name: "reader", filesystem: { workspace: "read" } });
      const placed = inspect({ env, depth: 2 });
      await expect(
        client.sessions.create({ model: { provider: "scripted", script: [] }, tools: [placed] }),
      ).rejects.toMatchObject({
        code: "invalid_component",
      });
      // The file is fixed; the failed admission was not cached, so the next create re-reads it.
      writeFileSync(file, valid);
      requests.length = 0;
      const s1 = await client.sessions.create({ model: { provider: "scripted", script: [] }, tools: [placed] });
      expect(requests.filter((m) => m === "HEAD")).toHaveLength(1);
      requests.length = 0;
      await client.sessions.create({
        model: { provider: "scripted", script: [] },
        tools: [inspect({ env, depth: 1 })],
      });
      expect(requests).toEqual([]);
      const [tools] = await brain.db.sql`SELECT tools FROM sessions WHERE id = ${s1.id}`;
      expect(tools!.tools[0]).toMatchObject({
        env: { type: "brain", name: "reader", filesystem: { workspace: "read" } },
        implementation: { type: "component", sha256: sha(valid) },
        options: { depth: 2 },
      });
    } finally {
      await client.close();
    }
  });

  it("refuses placements that break the rules, before storing anything", async () => {
    await put(valid);
    const base = { description: "d", inputSchema: { type: "object" }, outputSchema: null };
    const comp = { type: "component", sha256: sha(valid) };
    const cases: [object, string][] = [
      [
        {
          ...base,
          name: "a",
          env: { type: "brain", name: "b" },
          implementation: { type: "component", sha256: "f".repeat(64) },
        },
        "component_not_found",
      ],
      [
        {
          ...base,
          name: "a",
          env: { type: "brain", name: "b", filesystem: { workspace: "write" } },
          implementation: comp,
        },
        "grant_denied",
      ],
      [{ ...base, name: "a", env: { type: "brain", name: "b" } }, "invalid_placement"],
      [{ ...base, name: "a", env: { type: "host", name: "h" }, implementation: comp }, "invalid_placement"],
    ];
    const before = await brain.db.sql`SELECT count(*)::int AS n FROM sessions`;
    for (const [placement, code] of cases) {
      const res = await fetch(`${brain.url}/v1/sessions`, {
        method: "POST",
        headers: { authorization: `Bearer ${brain.token}`, "content-type": "application/json" },
        body: JSON.stringify({ model: { provider: "scripted", script: [] }, tools: [placement] }),
      });
      expect(((await res.json()) as { error: { code: string } }).error.code, JSON.stringify(placement)).toBe(code);
    }
    const twoConfigs = [
      { ...base, name: "a", env: { type: "brain", name: "b" }, implementation: comp },
      {
        ...base,
        name: "c",
        env: { type: "brain", name: "b", filesystem: { workspace: "read" } },
        implementation: comp,
      },
    ];
    const res = await fetch(`${brain.url}/v1/sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${brain.token}`, "content-type": "application/json" },
      body: JSON.stringify({ model: { provider: "scripted", script: [] }, tools: twoConfigs }),
    });
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("duplicate_environment");
    const after = await brain.db.sql`SELECT count(*)::int AS n FROM sessions`;
    expect(after[0]!.n).toBe(before[0]!.n);
  });

  it("the SDK keeps run tools in hosts and implementations in Brain environments", () => {
    const lookup = tool({ name: "lookup", description: "d", input: z.object({}), run: async () => null });
    expect(() => lookup({ env: brainEnv({ name: "x" }) } as never)).toThrow(/host environment/);
    const comp = tool({
      name: "c",
      description: "d",
      input: z.object({}),
      implementation: component("file:///x.wasm"),
    });
    expect(() => comp()).toThrow(/Brain environment/);
    expect(() =>
      tool({
        name: "both",
        description: "d",
        input: z.object({}),
        run: async () => null,
        implementation: component("file:///x.wasm"),
      }),
    ).toThrow(/exactly one of run and implementation/);
  });

  it("holds a bounded number of uploads at once: past it, busy (429) before the body is read", async () => {
    // Six uploads that never finish sending their bodies hold every place.
    const held = Array.from({ length: 6 }, () => {
      const abort = new AbortController();
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(valid.subarray(0, 1024));
        },
      });
      const sent = fetch(`${brain.url}/v1/components/${sha(valid)}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${brain.token}`, "content-type": "application/wasm" },
        body,
        duplex: "half",
        signal: abort.signal,
      } as RequestInit).catch(() => null);
      return { abort, sent };
    });
    await vi.waitFor(async () => {
      const r = await put(valid);
      expect([r.status, r.body.error?.code]).toEqual([429, "busy"]);
    });
    for (const h of held) h.abort.abort();
    await Promise.all(held.map((h) => h.sent));
    // Their places are given back as their clients go; a client going away is not news of the
    // database (it was taken for one: every request then failed database_unavailable).
    const answers: (string | undefined)[] = [];
    await vi.waitFor(
      async () => {
        const r = await put(valid);
        answers.push(r.body.error?.code ?? String(r.status));
        expect(r.status).toBe(201);
      },
      { timeout: 10_000 },
    );
    expect(answers.filter((a) => a !== "busy" && a !== "201")).toEqual([]);
  });
});
