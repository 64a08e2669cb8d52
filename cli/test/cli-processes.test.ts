import { randomBytes } from "node:crypto";
import { type AddressInfo, createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { TEST_SECRET_KEY } from "../../testkit/secrets.js";
import { LISTENING } from "../../testkit/server-process.js";
import { backendsNamed } from "../../testkit/wait.js";
import { brain, emptyDataDir, json, spawnBrainCli } from "./support.js";

// brain start, brain worker and brain doctor, as the processes an operator runs.
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

interface Doctor {
  ok: boolean;
  checks: { check: string; status: string; detail: string }[];
}
const status = (d: Doctor, check: string) => d.checks.find((c) => c.check === check)?.status;

describe("brain start, worker and doctor", () => {
  it("start serves with an in-process worker, worker adds one, doctor sees both and every check passes", async () => {
    const base = { DATABASE_URL: db.url, BRAIN_SECRET_KEY: TEST_SECRET_KEY };
    const before = json<Doctor>(await brain(["doctor", "--json"], base));
    // No server or worker yet: warnings, not failures.
    expect(before.ok).toBe(true);
    expect([status(before, "servers"), status(before, "workers")]).toEqual(["warn", "warn"]);

    const token = randomBytes(24).toString("base64url");
    const start = spawnBrainCli(["start"], {
      ...base,
      BRAIN_PORT: "0",
      BRAIN_API_TOKEN: token,
      BRAIN_LOG_LEVEL: "warn",
      BRAIN_EGRESS_ALLOW: undefined,
    });
    const worker = spawnBrainCli(["worker"], base);
    try {
      const [, url] = await start.waitForLine(LISTENING, 30_000);
      // A start on a database of one's own reaches no internal address until told.
      await start.waitForLine(/^Egress: public addresses only; BRAIN_EGRESS_ALLOW opens internal ones$/m);
      await start.waitForLine(/^Worker: in-process/m, 30_000);
      await worker.waitForLine(/^Brain worker ready \(id [0-9a-f-]+, concurrency \d+\)$/m, 30_000);
      const res = await fetch(`${url}/v1/sessions`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      // One LISTEN on the journal per process: start's worker hears through its server's (Postgres
      // wakes every listening backend at every notifying commit); the worker alone has its own.
      expect(await backendsNamed(db.sql, "brain-listener")).toBe(2);

      const run = await brain(["doctor", "--json"], base);
      expect(run.code).toBe(0);
      const d = json<Doctor>(run);
      expect(d.ok).toBe(true);
      for (const check of [
        "database",
        "schema",
        "pg-boss",
        "listen/notify",
        "durability",
        "clock (this host)",
        "servers",
        "workers",
      ]) {
        expect([check, status(d, check)]).toEqual([check, "ok"]);
      }
      expect(d.checks.find((c) => c.check === "workers")?.detail).toBe("2 alive");
      expect(status(d, `clock ${url}`)).toBe("ok");
      const table = await brain(["doctor"], base);
      expect(table.output).toMatch(/^listen\/notify\s+ok\s+a NOTIFY reached a LISTEN/m);
      // What an acknowledgment is worth on this database (no synchronous standby).
      expect(d.checks.find((c) => c.check === "durability")?.detail).toBe(
        "synchronous_commit=on, synchronous_standby_names='': an acknowledged write survives a crash of Postgres; a fail-over to an asynchronous standby can lose the latest ones",
      );

      await start.stop();
      expect((await start.exited).code).toBe(0);
      await worker.stop();
      expect((await worker.exited).code).toBe(0);
    } finally {
      await start.kill();
      await worker.kill();
    }
  });

  it("start exits 1 with the error when it cannot start (its port taken, its worker refused), giving back what it started", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      // Killed (code null) if it hangs: a start that failed once waited for a signal it ignored.
      const run = await brain(["start"], {
        DATABASE_URL: db.url,
        BRAIN_SECRET_KEY: TEST_SECRET_KEY,
        BRAIN_HOST: "127.0.0.1",
        BRAIN_PORT: String(port),
        BRAIN_LOG_LEVEL: "warn",
      });
      expect([run.code, run.output]).toEqual([1, expect.stringMatching(/^brain: .*EADDRINUSE/m)]);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
    // The server up, then its worker refused (a bad setting): the server is stopped, the process ends.
    const run = await brain(["start"], {
      DATABASE_URL: db.url,
      BRAIN_SECRET_KEY: TEST_SECRET_KEY,
      BRAIN_PORT: "0",
      BRAIN_LOG_LEVEL: "warn",
      BRAIN_WORKER_CONCURRENCY: "0",
    });
    expect([run.code, run.output]).toEqual([1, expect.stringMatching(/^brain: .*BRAIN_WORKER_CONCURRENCY/m)]);
    expect(run.output).toMatch(LISTENING);
  });

  it("doctor fails (exit 1) on an unmigrated database and on one it cannot reach", async () => {
    const empty = await createEmptyDatabase();
    try {
      const run = await brain(["doctor", "--json"], { DATABASE_URL: empty.url });
      expect(run.code).toBe(1);
      const d = json<Doctor>(run);
      expect(status(d, "schema")).toBe("fail");
      expect(d.checks.find((c) => c.check === "schema")?.detail).toMatch(/run brain migrate/);
    } finally {
      await empty.drop();
    }
    const down = await brain(["doctor"], { DATABASE_URL: "postgres://postgres@127.0.0.1:1/postgres" });
    expect(down.code).toBe(1);
    expect(down.output).toMatch(/^database\s+fail\s+database unreachable/m);
  });

  it("without DATABASE_URL, commands use the embedded Postgres of a running brain start (never a second one) and its saved token", async () => {
    const dataDir = emptyDataDir();
    const local = { DATABASE_URL: undefined, BRAIN_DATA_DIR: dataDir, BRAIN_SECRET_KEY: TEST_SECRET_KEY };
    const start = spawnBrainCli(["start"], {
      ...local,
      BRAIN_PORT: "0",
      BRAIN_WORKER: "0",
      BRAIN_API_TOKEN: undefined,
      BRAIN_EGRESS_ALLOW: undefined,
    });
    try {
      const [, url] = await start.waitForLine(LISTENING, 90_000);
      // The embedded development default reaches loopback, and says so.
      await start.waitForLine(
        /^Egress: loopback open \(localhost, 127\.0\.0\.0\/8, ::1\): the embedded development default/m,
      );
      // No BRAIN_TOKEN: the operator token brain start generated and saved under BRAIN_DATA_DIR.
      const ls = await brain(["sessions", "ls"], { ...local, BRAIN_URL: url });
      expect(ls.code).toBe(0);
      const q = await brain(["sql", "--", "-At", "-c", "SELECT count(*) FROM servers WHERE stopped_at IS NULL"], local);
      expect([q.code, q.output.trim()]).toEqual([0, "1"]);
      // The server's Postgres was used, not restarted under it.
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
      await start.stop();
      expect((await start.exited).code).toBe(0);
      // With nothing running, a command starts the embedded Postgres for itself and stops it.
      const calls = await brain(["calls", "ls"], local, 90_000);
      expect([calls.code, calls.output.trim()]).toEqual([0, "(none)"]);
    } finally {
      await start.kill();
    }
  });
});
