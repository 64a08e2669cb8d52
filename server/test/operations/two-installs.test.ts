import { Brain, tool } from "@aexhq/brain";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { createEmptyDatabase, type TestDatabase } from "../../../testkit/database.js";
import { parseExposition } from "../../../testkit/metrics.js";
import { type ServerProcess, spawnServer } from "../../../testkit/server-process.js";
import { scripted } from "../../../testkit/turns.js";

// Two installs in one database, each with its own BRAIN_SCHEMA (and `<schema>_boss`), started at
// once so that they migrate at the same time: their tables, wake-ups, locks and jobs stay apart.

let db: TestDatabase;
const servers: Record<"a" | "b", ServerProcess> = {} as never;

const step = tool({
  name: "step",
  description: "One step, with a deadline (a deadline job in pg-boss).",
  input: z.object({}),
  timeoutMs: 60_000,
  run: async (_input, ctx) => ctx.finish({ ok: true }),
});

beforeAll(async () => {
  db = await createEmptyDatabase();
  const [a, b] = await Promise.all(
    (["install_a", "install_b"] as const).map((schema) =>
      spawnServer({ databaseUrl: db.url, env: { BRAIN_SCHEMA: schema, BRAIN_LOG_LEVEL: "warn" } }),
    ),
  );
  servers.a = a!;
  servers.b = b!;
}, 120_000);

afterAll(async () => {
  await Promise.all(Object.values(servers).map((s) => s.stop().catch(() => {})));
  await db?.drop();
});

async function notifiesReceived(server: ServerProcess): Promise<number> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.token}` } });
  const samples = parseExposition(await res.text());
  return samples.find((s) => s.name === "brain_notifies_received_total")?.value ?? Number.NaN;
}

it("keeps two installs in one database apart: tables, wake-ups and jobs", async () => {
  const clients = {
    a: new Brain({ url: servers.a.url, token: servers.a.token }),
    b: new Brain({ url: servers.b.url, token: servers.b.token }),
  };
  try {
    const turns = Array.from({ length: 5 }, () => [{ toolCalls: [{ name: "step", input: {} }] }, { text: "done" }]);
    const sessions = await Promise.all(
      (["a", "b"] as const).map((k) =>
        clients[k].sessions.create({ model: scripted(...turns.flat()), tools: [step()] }),
      ),
    );
    for (let i = 0; i < 5; i++) {
      await Promise.all(sessions.map(async (s) => expect(await s.send(`turn ${i}`)).toBe("done")));
    }
    // Each install's tables hold its own session only.
    for (const [schema, s] of [
      ["install_a", sessions[0]!],
      ["install_b", sessions[1]!],
    ] as const) {
      const rows = await db.sql.unsafe<{ id: string }[]>(`SELECT id FROM ${schema}.sessions`);
      expect(rows.map((r) => r.id)).toEqual([s.id]);
    }
    // Neither server heard the other's commits: their NOTIFY channels are their schemas'.
    expect(await notifiesReceived(servers.a)).toBe(0);
    expect(await notifiesReceived(servers.b)).toBe(0);
    // Neither install sees the other's session through its API.
    await expect(clients.a.sessions.get(sessions[1]!.id)).rejects.toMatchObject({ code: "not_found" });
    // Each install's deadline jobs are in its own pg-boss schema.
    for (const schema of ["install_a_boss", "install_b_boss"]) {
      const [row] = await db.sql.unsafe<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM ${schema}.job WHERE name = 'brain-deadlines'`,
      );
      expect(row!.n, schema).toBeGreaterThan(0);
    }
  } finally {
    await Promise.all([clients.a.close(), clients.b.close()]);
  }
}, 120_000);
