// A server process killed (SIGKILL) and started again on the same port and database, as after a
// crash: connected hosts come back within the backoff's cap (3 s) plus a margin, spread rather
// than all at once, and a `send` that was waiting answers with the turn as the restarted server
// finishes it, or with the error the journal records for it.
import { Brain, type BrainError, tool } from "@aexhq/brain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestDatabase, type TestDatabase } from "../../../testkit/database.js";
import { startFakeOpenAI } from "../../../testkit/fake-providers.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { type ServerProcess, spawnServer } from "../../../testkit/server-process.js";
import { scripted } from "../../../testkit/turns.js";
import { until } from "../../../testkit/wait.js";

const BACKOFF_MAX_MS = 3_000;
/** Start-up, the WebSocket handshake and the welcome on a loaded 2-core machine. */
const MARGIN_MS = 4_000;

let db: TestDatabase;
const token = `restart-${Date.now()}-token`;
const servers: ServerProcess[] = [];
const clients: Brain[] = [];
const openai = startedBeforeAll(() => startFakeOpenAI());

beforeAll(async () => {
  db = await createTestDatabase({ max: 5 });
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  for (const s of servers) await s.kill().catch(() => {});
  await db?.drop();
});

async function start(port = "0", dataDir?: string): Promise<ServerProcess> {
  const env: Record<string, string> = { BRAIN_LOG_LEVEL: "warn", BRAIN_PORT: port };
  if (dataDir) env.BRAIN_DATA_DIR = dataDir;
  const s = await spawnServer({ databaseUrl: db.url, token, env });
  servers.push(s);
  return s;
}

/** The same server, killed and started again on its port: the address clients know. */
async function crashAndRestart(s: ServerProcess, downMs = 0): Promise<ServerProcess> {
  await s.kill("SIGKILL");
  // An outage of this length: the point of the test, not a wait for something.
  if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
  return start(new URL(s.url).port, s.dataDir);
}

function client(url: string): Brain {
  const c = new Brain({ url, token });
  clients.push(c);
  return c;
}

/** A tool that runs until its call is interrupted, counting its runs. */
function holdTool(runs: { n: number }) {
  return tool({
    name: "hold",
    description: "Runs until interrupted.",
    input: z.object({}),
    run: async (_input, ctx) => {
      runs.n++;
      await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
    },
  });
}

/** When each host last connected, as epoch ms of the database clock. */
async function lastConnected(hostIds: string[]): Promise<Map<string, number>> {
  const rows = await db.sql<{ id: string; at: number | null }[]>`
    SELECT id, (extract(epoch FROM last_connected_at) * 1000)::float8 AS at FROM hosts WHERE id = ANY(${hostIds})`;
  return new Map(rows.map((r) => [r.id, r.at ?? 0]));
}

// A crash, a restart and an outage per test: longer than vitest's default bound, on a loaded machine.
const TEST_MS = 90_000;

describe("a server restarted on the same port", () => {
  it(
    "connected hosts reconnect within the backoff cap after a long outage, spread over the window",
    async () => {
      const a = await start();
      const hosts = Array.from({ length: 6 }, () => client(a.url));
      const runs = { n: 0 };
      for (const h of hosts) await h.sessions.create({ model: scripted(), tools: [holdTool(runs)()] });
      const ids = hosts.map((h) => h.credentials()!.hostId);
      const before = await lastConnected(ids);
      expect([...before.values()].every((at) => at > 0)).toBe(true);
      // 12 s down: the old exponential backoff (30 s cap) would be waiting 8–16 s per attempt by now.
      const b = await crashAndRestart(a, 12_000);
      const back = Date.now();
      const seen = new Map<string, number>();
      await until(
        "every host to reconnect",
        async () => {
          const now = Date.now();
          for (const [id, at] of await lastConnected(ids)) if (at > before.get(id)! && !seen.has(id)) seen.set(id, now);
          return seen.size === ids.length;
        },
        BACKOFF_MAX_MS + MARGIN_MS + 10_000,
      );
      const delays = [...seen.values()].map((at) => at - back);
      console.log(`reconnections after restart (ms): ${delays.sort((x, y) => x - y).join(", ")}`);
      for (const d of delays) expect(d).toBeLessThan(BACKOFF_MAX_MS + MARGIN_MS);
      // Full jitter: six hosts do not come back in the same instant.
      expect(Math.max(...delays) - Math.min(...delays)).toBeGreaterThan(100);
      await b.stop();
    },
    TEST_MS,
  );

  it(
    "a send waiting across the crash answers with the turn the restarted server finishes",
    async () => {
      const a = await start();
      const brain = client(a.url);
      const runs = { n: 0 };
      const session = await brain.sessions.create({
        model: scripted({ toolCalls: [{ name: "hold", input: {} }] }, { text: "recovered" }),
        tools: [holdTool(runs)()],
      });
      const turn = session.send("start");
      await until("the tool to run", async () => runs.n === 1);
      await crashAndRestart(a);
      // The call ends unknown once the dead server is declared dead; the loop then answers.
      await expect(turn).resolves.toBe("recovered");
      const [call] = await db.sql`SELECT outcome FROM tool_calls WHERE session_id = ${session.id}`;
      expect(call!.outcome).toEqual({ status: "unknown", cause: "server_lost" });
      expect(runs.n).toBe(1);
    },
    TEST_MS,
  );

  it(
    "a send whose model call was in flight in the crash rejects with model_call_lost",
    async () => {
      openai.reply({ kind: "hang" });
      const a = await start();
      const brain = client(a.url);
      const session = await brain.sessions.create({
        model: { provider: "openai", name: "gpt-test", apiKey: "sk-test", baseUrl: openai.url },
      });
      const asked = openai.requests.length;
      const turn = session.send("start").then(
        (text) => {
          throw new Error(`the turn resolved with ${JSON.stringify(text)}`);
        },
        (error: unknown) => error as BrainError,
      );
      await openai.waitForRequests(asked + 1);
      await crashAndRestart(a);
      expect(await turn).toMatchObject({ name: "BrainError", code: "model_call_lost" });
      const [ended] = await db.sql`
      SELECT payload FROM journal WHERE session_id = ${session.id} AND kind = 'activation_ended'`;
      expect(ended!.payload).toMatchObject({ status: "failed", error: { code: "model_call_lost" } });
    },
    TEST_MS,
  );
});
