import { Brain, tool } from "@aexhq/brain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { brain as brainCli, emptyDataDir } from "../../../cli/test/support.js";
import { createTestDatabase, type TestDatabase } from "../../../testkit/database.js";
import { parseExposition } from "../../../testkit/metrics.js";
import { type PgBouncer, startPgBouncer } from "../../../testkit/pgbouncer.js";
import { type ServerProcess, spawnServer } from "../../../testkit/server-process.js";
import { scripted } from "../../../testkit/turns.js";

// Behind PgBouncer in transaction mode (Debian's 1.18: no named prepared statements, no session
// state, `search_path` refused as a startup parameter), a server starts and runs turns with tools:
// without a direct URL it finds that LISTEN does not deliver and polls; with BRAIN_DIRECT_URL its
// LISTEN goes direct and wake-ups are notified.

let db: TestDatabase;
let bouncer: PgBouncer;
const servers: ServerProcess[] = [];
const token = `pooler-${Date.now()}-operator`;

const step = tool({
  name: "step",
  description: "One step.",
  input: z.object({ n: z.number() }),
  run: async ({ n }, ctx) => ctx.finish({ n }),
});

beforeAll(async () => {
  db = await createTestDatabase();
  bouncer = await startPgBouncer(db.directUrl);
}, 60_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop().catch(() => {})));
  await bouncer?.stop();
  await db?.drop();
});

async function serve(env: Record<string, string> = {}): Promise<ServerProcess> {
  const server = await spawnServer({
    databaseUrl: bouncer.through(db.directUrl),
    token,
    env: { BRAIN_LOG_LEVEL: "warn", ...env },
    startTimeoutMs: 60_000,
  });
  servers.push(server);
  return server;
}

async function polling(server: ServerProcess): Promise<number | undefined> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  return parseExposition(await res.text()).find((s) => s.name === "brain_wakeups_polling")?.value;
}

/** Two turns of two rounds of tool calls each. */
async function turns(server: ServerProcess): Promise<void> {
  const brain = new Brain({ url: server.url, token });
  try {
    const round = (n: number) => ({
      toolCalls: [
        { name: "step", input: { n } },
        { name: "step", input: { n: n + 1 } },
      ],
    });
    const model = scripted(round(1), round(3), { text: "one" }, round(5), { text: "two" });
    const s = await brain.sessions.create({ model, tools: [step()] });
    await expect(s.send("first")).resolves.toBe("one");
    await expect(s.send("second")).resolves.toBe("two");
    const calls = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM calls WHERE session_id = ${s.id} AND state = 'ended'`;
    expect(calls[0]!.n).toBe(6);
  } finally {
    await brain.close();
  }
}

describe("behind PgBouncer in transaction mode", () => {
  it("without a direct URL: starts, says it polls, and runs turns with tools", async () => {
    const server = await serve();
    expect(server.output()).toMatch(/LISTEN\/NOTIFY does not deliver here .*fall back to polling/);
    expect(await polling(server)).toBe(1);
    await turns(server);
    expect(server.output()).not.toMatch(/prepared statement|search_path|does not exist|uncaught/i);
    expect(server.child.exitCode).toBeNull();
  }, 120_000);

  it("without a direct URL, two servers: a message sent through one reaches a session the other created", async () => {
    const [owner, other] = [await serve(), await serve()];
    const created = new Brain({ url: owner.url, token });
    try {
      // No tools: nothing but the message and its owner's poll wakes the session.
      const s = await created.sessions.create({ model: scripted("one", "two"), tools: [] });
      const send = async (text: string) => {
        const res = await fetch(`${other.url}/v1/sessions/${s.id}/messages`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ text, wait: true, waitMs: 30_000 }),
        });
        return ((await res.json()) as { activation: { text?: string } | null }).activation?.text;
      };
      expect(await send("first")).toBe("one");
      expect(await send("second")).toBe("two");
    } finally {
      await created.close();
    }
  }, 120_000);

  it("with BRAIN_DIRECT_URL: LISTEN goes direct and hears, statements go through the pooler", async () => {
    const server = await serve({ BRAIN_DIRECT_URL: db.directUrl });
    expect(server.output()).not.toMatch(/does not deliver/);
    expect(await polling(server)).toBe(0);
    await turns(server);
    expect(server.output()).not.toMatch(/prepared statement|search_path|does not exist|uncaught/i);
  }, 120_000);

  it("brain doctor warns that wake-ups poll without a direct URL, and passes with one", async () => {
    const listenCheck = async (env: Record<string, string>) => {
      const run = await brainCli(["doctor", "--json"], {
        DATABASE_URL: bouncer.through(db.directUrl),
        BRAIN_DATA_DIR: emptyDataDir(),
        ...env,
      });
      const report = JSON.parse(run.output) as { checks: { check: string; status: string; detail: string }[] };
      return report.checks.find((c) => c.check === "listen/notify");
    };
    expect(await listenCheck({})).toMatchObject({ status: "warn", detail: expect.stringMatching(/BRAIN_DIRECT_URL/) });
    expect(await listenCheck({ BRAIN_DIRECT_URL: db.directUrl })).toMatchObject({ status: "ok" });
  }, 120_000);

  it("brain sql opens psql on the direct URL, with Brain's schema on the search_path", async () => {
    const run = await brainCli(["sql", "--", "-At", "-c", "SELECT count(*) FROM journal"], {
      DATABASE_URL: bouncer.through(db.directUrl),
      BRAIN_DIRECT_URL: db.directUrl,
      BRAIN_DATA_DIR: emptyDataDir(),
    });
    expect(run.code).toBe(0);
    expect(run.output.trim()).toMatch(/^\d+$/);
  }, 60_000);
});
