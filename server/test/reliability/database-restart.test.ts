import { Brain, type Session, tool } from "@aexhq/brain";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type RestartablePostgres, startRestartablePostgres } from "../../../testkit/restartable-postgres.js";
import { type ServerProcess, spawnServer } from "../../../testkit/server-process.js";
import { scripted } from "../../../testkit/turns.js";
import { deferred, until } from "../../../testkit/wait.js";

// A server process on a Postgres cluster of the test's own, which the test restarts (fast and
// immediate), stops for a while and cuts the connections of. The server must ride all of it out:
// no exit, no wedge, requests failing fast while the database is away, and every session going
// on from its journal once it is back; and the first server back must not take the sessions of
// the others before they had the time to come back too.

let pg: RestartablePostgres;
let server: ServerProcess;
let brain: Brain;
let admin: postgres.Sql;
let runs = 0;
let gate = deferred();

const step = tool({
  name: "step",
  description: "One step; waits at the gate when asked to.",
  input: z.object({ wait: z.boolean() }),
  run: async ({ wait }, ctx) => {
    runs++;
    if (wait) await gate.promise;
    return ctx.finish({ n: runs });
  },
});

/** A session whose every turn calls `step` once, then answers "done". */
async function session(wait = false): Promise<Session> {
  const turns = Array.from({ length: 8 }, () => [
    { toolCalls: [{ name: "step", input: { wait } }] },
    { text: "done" },
  ]).flat();
  return brain.sessions.create({ model: scripted(...turns), tools: [step()] });
}

const slow = <T>(what: string, probe: () => Promise<T | undefined | null | false>) => until(what, probe, 60_000);

async function readiness(): Promise<number> {
  return (await fetch(`${server.url}/readyz`).catch(() => ({ status: 0 }))).status;
}

async function alive(): Promise<void> {
  expect(server.child.exitCode, server.output()).toBeNull();
  expect(server.child.signalCode).toBeNull();
  expect(server.output()).not.toMatch(/TypeError|uncaught/i);
}

/** A full turn with its tool call, once the server says it is ready again. */
async function turnWorks(s: Session): Promise<void> {
  await slow("readiness after the outage", async () => (await readiness()) === 200);
  const before = runs;
  await expect(s.send("go")).resolves.toBe("done");
  expect(runs).toBe(before + 1);
}

beforeAll(async () => {
  pg = await startRestartablePostgres();
  server = await spawnServer({ databaseUrl: pg.url, env: { BRAIN_LOG_LEVEL: "warn" }, startTimeoutMs: 60_000 });
  brain = new Brain({ url: server.url, token: server.token });
  admin = postgres(pg.url, { max: 1, onnotice: () => {} });
}, 120_000);

afterAll(async () => {
  await brain?.close().catch(() => {});
  await server?.kill().catch(() => {});
  await admin?.end({ timeout: 1 }).catch(() => {});
  await pg?.destroy();
});

describe("the database goes away and comes back", () => {
  it("survives a fast restart, an immediate restart and terminated backends", async () => {
    const s = await session();
    await turnWorks(s);
    for (const mode of ["fast", "immediate"] as const) {
      await pg.restart(mode);
      await turnWorks(s);
      await alive();
    }
    expect(await pg.terminate("brain")).toBeGreaterThan(0);
    await turnWorks(s);
    await alive();
  }, 180_000);

  it("fails fast while the database is down, reports it in readiness, and resumes after", async () => {
    const s = await session();
    await pg.stop("fast");
    try {
      // The server notices within a heartbeat or two (the LISTEN connection at once); from then on
      // requests fail at once.
      await slow("readiness to report the database away", async () => {
        const res = await fetch(`${server.url}/readyz`);
        const body = (await res.json()) as { database: boolean };
        return res.status === 503 && body.database === false;
      });
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      const res = await fetch(`${server.url}/v1/sessions/${s.id}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
        body: JSON.stringify({ text: "while down" }),
      });
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("database_unavailable");
      await expect(s.send("while down")).rejects.toMatchObject({ code: "database_unavailable" });
    } finally {
      await pg.start();
    }
    await turnWorks(s);
    // The heartbeat resumed: this server is live in the table others judge it by. Waited for, not
    // read once: the turn can complete before the first beat after the restart lands (a beat was
    // seen to take over a second on a loaded CI machine), and a beat that never resumes still fails.
    await slow("the heartbeat to resume", async () => {
      const [row] = await admin<{ fresh: boolean }[]>`
        SELECT heartbeat_at > now() - interval '3 seconds' AND stopped_at IS NULL AS fresh FROM brain.servers
        WHERE kind = 'server' ORDER BY heartbeat_at DESC LIMIT 1`;
      return row?.fresh;
    });
    await alive();
  }, 180_000);

  it("a call in flight across a restart finishes, and its turn completes", async () => {
    gate = deferred();
    const s = await session(true);
    const answer = s.send("go");
    await slow("the tool to be invoked", async () => runs > 0 && gate !== undefined && (await openCalls(s.id)) === 1);
    await pg.restart("fast");
    await slow("readiness after the restart", async () => (await readiness()) === 200);
    gate.resolve();
    await expect(answer).resolves.toBe("done");
    expect(await openCalls(s.id)).toBe(0);
    await alive();
  }, 180_000);
});

describe("an outage longer than the stale window", () => {
  it("declares no server dead: a call in flight on one server finishes after it", async () => {
    const other = await spawnServer({ databaseUrl: pg.url, token: server.token, env: { BRAIN_LOG_LEVEL: "warn" } });
    try {
      gate = deferred();
      const s = await session(true);
      const answer = s.send("go");
      await slow("the tool to be invoked", async () => (await openCalls(s.id)) === 1);
      await pg.stop("fast");
      try {
        await slow("both servers to see the outage", async () => (await readiness()) === 503);
        // The outage itself must outlast the 3 s after which a silent server is judged dead.
        await new Promise((resolve) => setTimeout(resolve, 4_500));
      } finally {
        await pg.start();
      }
      await slow("readiness after the outage", async () => (await readiness()) === 200);
      // Both servers beat again for longer than the stale window before anyone may judge.
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      gate.resolve();
      await expect(answer).resolves.toBe("done");
      // Both processes first: a server that died would be declared dead rightly, and its output
      // says why it died.
      const outputs = () => `${server.output()}\n--- the other server ---\n${other.output()}`;
      expect(other.child.exitCode, outputs()).toBeNull();
      expect(server.child.exitCode, outputs()).toBeNull();
      const stopped = await admin<{ id: string; heartbeat_at: Date }[]>`
        SELECT id, heartbeat_at FROM brain.servers WHERE kind = 'server' AND stopped_at IS NOT NULL`;
      expect(stopped, outputs()).toEqual([]);
      const outcomes = await admin<{ status: string }[]>`
        SELECT outcome->>'status' AS status FROM brain.tool_calls WHERE session_id = ${s.id}`;
      expect(outcomes.map((o) => o.status)).toEqual(["ok"]);
      await alive();
    } finally {
      await other.kill().catch(() => {});
    }
  }, 180_000);
});

describe("a server frozen through an outage", () => {
  it("keeps its sessions until another server, back for a stale window, has declared it dead", async () => {
    const frozen = await spawnServer({ databaseUrl: pg.url, token: server.token, env: { BRAIN_LOG_LEVEL: "warn" } });
    const itsBrain = new Brain({ url: frozen.url, token: frozen.token });
    try {
      const s = await itsBrain.sessions.create({ model: scripted({ text: "done" }), tools: [] });
      await expect(s.send("go")).resolves.toBe("done");
      const [before] = await admin<{ owner_id: string }[]>`SELECT owner_id FROM brain.sessions WHERE id = ${s.id}`;
      // Every change of owner, with whether the old owner had been declared dead (or had stopped)
      // when it was taken: recorded by the database itself, so no poll can miss the moment.
      await admin.unsafe(`
        CREATE SCHEMA IF NOT EXISTS probe;
        CREATE TABLE IF NOT EXISTS probe.claims (session_id uuid, old_owner uuid, old_owner_stopped boolean);
        CREATE OR REPLACE FUNCTION probe.record_claim() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO probe.claims SELECT NEW.id, OLD.owner_id,
            (SELECT stopped_at IS NOT NULL FROM brain.servers WHERE id = OLD.owner_id);
          RETURN NEW;
        END $$;
        DROP TRIGGER IF EXISTS probe_record_claim ON brain.sessions;
        CREATE TRIGGER probe_record_claim AFTER UPDATE OF owner_id ON brain.sessions
          FOR EACH ROW WHEN (OLD.owner_id IS DISTINCT FROM NEW.owner_id) EXECUTE FUNCTION probe.record_claim();`);
      await pg.stop("fast");
      // Frozen as the outage began: its last beat is as recent as the other server's.
      process.kill(frozen.child.pid!, "SIGSTOP");
      try {
        await new Promise((resolve) => setTimeout(resolve, 4_500));
      } finally {
        await pg.start();
      }
      // The server back first finds the frozen one's beat stale at once, but may take its session
      // only once it has itself been back a stale window and declared the silent one dead.
      await slow("the frozen server's session taken over", async () => {
        const [row] = await admin<{ owner_id: string }[]>`SELECT owner_id FROM brain.sessions WHERE id = ${s.id}`;
        return row?.owner_id !== before?.owner_id;
      });
      const claims = await admin<{ old_owner_stopped: boolean }[]>`
        SELECT old_owner_stopped FROM probe.claims WHERE session_id = ${s.id} AND old_owner = ${before!.owner_id}`;
      expect(claims.length).toBeGreaterThan(0);
      expect(
        claims.map((c) => c.old_owner_stopped),
        server.output(),
      ).toEqual(claims.map(() => true));
      await alive();
    } finally {
      if (frozen.child.exitCode === null) process.kill(frozen.child.pid!, "SIGCONT");
      await itsBrain.close().catch(() => {});
      await frozen.kill().catch(() => {});
      await admin`DROP TRIGGER IF EXISTS probe_record_claim ON brain.sessions`.catch(() => {});
    }
  }, 180_000);
});

async function openCalls(sessionId: string): Promise<number> {
  const [row] = await admin<{ n: number }[]>`
    SELECT count(*)::int AS n FROM brain.tool_calls WHERE session_id = ${sessionId} AND status <> 'ended'`;
  return row?.n ?? 0;
}
