import { Brain, tool } from "@aexhq/brain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type ReplicatedPostgres, startReplicatedPostgres } from "../../../testkit/replicated-postgres.js";
import { type ServerProcess, spawnServer } from "../../../testkit/server-process.js";
import { scripted } from "../../../testkit/turns.js";
import { until } from "../../../testkit/wait.js";

// A managed-style fail-over on a primary and a synchronous standby of the test's own: the server
// is given one URL naming both (the standby first) with target_session_attrs=read-write. The
// primary is killed under load and the standby promoted; the promoted standby still waits for a
// synchronous standby that is gone, so every commit hangs until the operator clears that setting.

let pg: ReplicatedPostgres;
let server: ServerProcess;
let brain: Brain;

const step = tool({
  name: "step",
  description: "One step.",
  input: z.object({}),
  run: async (_input, ctx) => ctx.finish({ ok: true }),
});

async function readyz(): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${server.url}/readyz`).catch(() => null);
  if (!res) return { status: 0, body: {} };
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const slow = <T>(what: string, probe: () => Promise<T | undefined | null | false>) => until(what, probe, 90_000);

/** Sessions whose every turn calls `step`, then answers "done". */
async function session() {
  const turns = Array.from({ length: 40 }, () => [{ toolCalls: [{ name: "step", input: {} }] }, { text: "done" }]);
  return brain.sessions.create({ model: scripted(...turns.flat()), tools: [step()] });
}

beforeAll(async () => {
  pg = await startReplicatedPostgres();
  server = await spawnServer({
    databaseUrl: pg.bothUrl(),
    env: { BRAIN_LOG_LEVEL: "warn" },
    startTimeoutMs: 60_000,
  });
  brain = new Brain({ url: server.url, token: server.token });
}, 180_000);

afterAll(async () => {
  await brain?.close().catch(() => {});
  await server?.kill().catch(() => {});
  await pg?.destroy();
});

describe("a multi-host DATABASE_URL and a fail-over to a synchronous standby", () => {
  it("lands every connection on the primary though the standby is named first", async () => {
    const s = await session();
    await expect(s.send("go")).resolves.toBe("done");
    const on = async (sql: ReplicatedPostgres["primary"]) => {
      const [row] = await sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE 'brain%'`;
      return row!.n;
    };
    expect(await on(pg.primary)).toBeGreaterThan(0);
    expect(await on(pg.standby)).toBe(0);
    // The banner states what an acknowledgment is worth here.
    expect(server.output()).toMatch(
      /^Durability: synchronous_commit=on: .* the loss of the primary: a synchronous standby \(standby\) has it on disk$/m,
    );
  }, 120_000);

  it("loses no acknowledged turn, is not ready while commits hang, and resumes on the new primary", async () => {
    const acknowledged: string[] = [];
    let stop = false;
    // Four sessions taking turns back to back; a turn whose send resolved was acknowledged.
    const load = Array.from({ length: 4 }, async () => {
      const s = await session();
      for (let i = 0; i < 40 && !stop; i++) {
        const answer = await s.send(`turn ${i}`).catch(() => null);
        if (answer === "done") acknowledged.push(`${s.id}/${i}`);
        else await new Promise((resolve) => setTimeout(resolve, 200));
      }
    });
    await slow("some turns acknowledged under load", async () => acknowledged.length >= 8);
    await pg.killPrimary();
    const beforePromotion = acknowledged.length;
    await pg.promote();

    // The new primary answers queries but cannot commit (its synchronous standby is gone):
    // readiness must say so rather than answer 200.
    const stalled = await slow("readiness to report a writer that cannot commit", async () => {
      const r = await readyz();
      return r.status === 503 && r.body.committing === false ? r : undefined;
    });
    expect(stalled.body.database).toBe(true);

    await pg.standby`ALTER SYSTEM RESET synchronous_standby_names`;
    await pg.standby`SELECT pg_reload_conf()`;
    await slow("readiness on the new primary", async () => (await readyz()).status === 200);
    stop = true;
    await Promise.all(load);

    // Every acknowledged turn is on the new primary: each session's journal holds at least as many
    // ended activations as turns acknowledged to the client.
    const perSession = new Map<string, number>();
    for (const key of acknowledged) {
      const id = key.split("/")[0]!;
      perSession.set(id, (perSession.get(id) ?? 0) + 1);
    }
    expect(beforePromotion).toBeGreaterThanOrEqual(8);
    for (const [id, turns] of perSession) {
      const [row] = await pg.standby<{ n: number }[]>`
        SELECT count(*)::int AS n FROM brain.journal WHERE session_id = ${id} AND kind = 'activation_ended'`;
      expect(row!.n, `session ${id}`).toBeGreaterThanOrEqual(turns);
    }
    // And work goes on there.
    const after = await session();
    await expect(after.send("after")).resolves.toBe("done");
    expect(server.child.exitCode, server.output()).toBeNull();
  }, 300_000);
});
