import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Brain, tool } from "@aexhq/brain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { spawnServer } from "../../../testkit/server-process.js";
import { startTlsPostgres, type TlsPostgres } from "../../../testkit/tls-postgres.js";
import { scripted } from "../../../testkit/turns.js";
import { until } from "../../../testkit/wait.js";

// What DBAs set on a Postgres they run: TLS checked against their CA (sslmode=verify-full), a
// password that changes while Brain runs, and timeouts on the role. A cluster of the test's own.

let pg: TlsPostgres;
const role = "brain_dba_role";
let passwordFile: string;

/** The role's URL, its password left to the file, with TLS parameters. */
const roleUrl = (tls: string) => `postgres://${role}@127.0.0.1:${pg.port}/brain_dba?${tls}`;

const step = tool({
  name: "step",
  description: "One step.",
  input: z.object({}),
  run: async (_input, ctx) => ctx.finish({ ok: true }),
});

beforeAll(async () => {
  pg = await startTlsPostgres();
  await pg.admin.unsafe(`CREATE ROLE ${role} LOGIN PASSWORD 'first-password'`);
  await pg.admin.unsafe(`CREATE DATABASE brain_dba OWNER ${role}`);
  passwordFile = join(mkdtempSync(join(tmpdir(), "brain-pw-")), "password");
  writeFileSync(passwordFile, "first-password\n", { mode: 0o600 });
}, 120_000);

afterAll(async () => {
  await pg?.destroy();
});

async function serve(tls: string) {
  return spawnServer({
    databaseUrl: roleUrl(tls),
    env: { BRAIN_LOG_LEVEL: "warn", BRAIN_DATABASE_PASSWORD_FILE: passwordFile },
    startTimeoutMs: 60_000,
  });
}

describe("what a DBA sets", () => {
  it("sslmode=verify-full against the CA that signed the server, and refuses another CA", async () => {
    const refused = await serve(`sslmode=verify-full&sslrootcert=${pg.otherCaFile}`).catch((e: Error) => e);
    expect(refused).toBeInstanceOf(Error);
    expect(String(refused)).toMatch(/self[- ]signed certificate|unable to verify|certificate/i);

    const server = await serve(`sslmode=verify-full&sslrootcert=${pg.caFile}`);
    const brain = new Brain({ url: server.url, token: server.token });
    try {
      const s = await brain.sessions.create({ model: scripted("over TLS"), tools: [] });
      await expect(s.send("hi")).resolves.toBe("over TLS");
      // Every connection of the server (pg-boss's too) is encrypted.
      const rows = await pg.admin<{ app: string; ssl: boolean }[]>`
        SELECT a.application_name AS app, s.ssl FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
        WHERE a.usename = ${role}`;
      expect(rows.length).toBeGreaterThan(2);
      expect(rows.filter((r) => !r.ssl)).toEqual([]);
      expect(new Set(rows.map((r) => r.app))).toContain("brain-boss");
    } finally {
      await brain.close();
      await server.stop();
    }
  }, 120_000);

  it("a password changed while it runs, and timeouts on the role: it keeps working", async () => {
    // Timeouts a DBA sets on an application's role; they apply to connections made from now on.
    await pg.admin.unsafe(`ALTER ROLE ${role} SET idle_session_timeout = '1s'`);
    await pg.admin.unsafe(`ALTER ROLE ${role} SET idle_in_transaction_session_timeout = '2s'`);
    await pg.admin.unsafe(`ALTER ROLE ${role} SET statement_timeout = '10s'`);
    const server = await serve(`sslmode=verify-full&sslrootcert=${pg.caFile}`);
    const brain = new Brain({ url: server.url, token: server.token });
    try {
      const turns = Array.from({ length: 6 }, () => [{ toolCalls: [{ name: "step", input: {} }] }, { text: "done" }]);
      const s = await brain.sessions.create({ model: scripted(...turns.flat()), tools: [step()] });
      await expect(s.send("first")).resolves.toBe("done");

      // The password rotates: the new one is set and written to the file, and every connection
      // of the role is cut, so each must be made again with it.
      await pg.admin.unsafe(`ALTER ROLE ${role} PASSWORD 'second-password'`);
      writeFileSync(passwordFile, "second-password\n");
      await pg.admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = ${role}`;
      await until("readiness after the cut", async () => (await fetch(`${server.url}/readyz`)).status === 200, 60_000);

      // Idle for longer than idle_session_timeout between turns: the listener stays (it keeps
      // itself alive), pools close idle connections before the server would, no turn is lost.
      const listener = async () => {
        const [row] = await pg.admin<{ pid: number }[]>`
          SELECT pid FROM pg_stat_activity WHERE usename = ${role} AND application_name = 'brain-listener'`;
        return row?.pid;
      };
      const before = await until("the listener", listener, 30_000);
      for (let i = 0; i < 4; i++) {
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        await expect(s.send(`turn ${i}`)).resolves.toBe("done");
      }
      expect(await listener()).toBe(before);
      expect(server.output()).not.toMatch(/password authentication failed|uncaught|TypeError/i);
      expect(server.child.exitCode).toBeNull();
    } finally {
      await brain.close();
      await server.stop();
      await pg.admin.unsafe(`ALTER ROLE ${role} RESET ALL`);
    }
  }, 180_000);
});
