import { randomBytes } from "node:crypto";
import { Brain } from "@aexhq/brain";
import { loadMigrations } from "@aexhq/brain-db/migrate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmptyDatabase, type TestDatabase } from "../../testkit/database.js";
import { spawnServer } from "../../testkit/server-process.js";
import { scripted } from "../../testkit/turns.js";
import { brain, json } from "./support.js";

// Two roles, as DBAs deploy: the owner runs `brain migrate --grant-to app` as a deploy step; the
// runtime role `app` has DML on Brain's two schemas and nothing else (no CREATE anywhere).

const LATEST = loadMigrations().length;
const role = `brain_rt_${randomBytes(4).toString("hex")}`;
const PASSWORD = "runtime-password";
let db: TestDatabase;
let appUrl: string;

beforeAll(async () => {
  db = await createEmptyDatabase();
  await db.sql.unsafe(`CREATE ROLE ${role} LOGIN PASSWORD '${PASSWORD}'`);
  // Nobody but the owner may create schemas or temporary tables here.
  await db.sql.unsafe(`REVOKE CREATE, TEMPORARY ON DATABASE ${db.name} FROM PUBLIC`);
  const url = new URL(db.url);
  url.username = role;
  url.password = PASSWORD;
  appUrl = url.toString();
});

afterAll(async () => {
  await db?.drop();
  // The role owns nothing; its grants went with the database.
  const { default: postgres } = await import("postgres");
  const admin = postgres(db.url.replace(`/${db.name}`, "/postgres"), { max: 1, onnotice: () => {} });
  await admin.unsafe(`DROP ROLE IF EXISTS ${role}`).finally(() => admin.end({ timeout: 1 }));
});

describe("two roles: an owner that migrates, a runtime role that only reads and writes", () => {
  it("prints the grants without a database, and refuses a role name that is not one", async () => {
    const printed = await brain(["migrate", "--print-sql", "--all", "--grant-to", role], {
      DATABASE_URL: "postgres://nobody@127.0.0.1:1/none",
    });
    expect(printed.code).toBe(0);
    expect(printed.output).toContain(`GRANT USAGE ON SCHEMA "brain", "brain_boss" TO "${role}";`);
    expect(printed.output).toContain(
      `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "brain", "brain_boss" TO "${role}";`,
    );
    expect(printed.output).not.toMatch(/GRANT (CREATE|ALL)/);
    const bad = await brain(["migrate", "--grant-to", "x; DROP TABLE y"], { DATABASE_URL: db.url });
    expect(bad.code).toBe(2);
    expect(bad.output).toMatch(/--grant-to: a role name/);
  });

  it("the runtime role may not migrate: `brain migrate` as it refuses, naming the command", async () => {
    const refused = await brain(["migrate"], { DATABASE_URL: appUrl });
    expect(refused.code).toBe(1);
    expect(refused.output).toContain(
      `schema brain is not installed and this release needs ${LATEST}, which role ${role} may not apply: run \`brain migrate\` as the schema's owner`,
    );
    const [none] = await db.sql`SELECT to_regnamespace('brain')::text AS n`;
    expect(none?.n).toBeNull();
  });

  it("after `brain migrate --grant-to`, the runtime role serves turns and nothing is in public", async () => {
    const migrated = await brain(["migrate", "--json", "--grant-to", role], { DATABASE_URL: db.url });
    expect(migrated.code).toBe(0);
    expect(json(migrated)).toMatchObject({ schema: "brain", version: LATEST, grantedTo: role });
    const server = await spawnServer({ databaseUrl: appUrl, env: { BRAIN_LOG_LEVEL: "warn" } });
    const client = new Brain({ url: server.url, token: server.token });
    try {
      const s = await client.sessions.create({ model: scripted("hello"), tools: [] });
      await expect(s.send("hi")).resolves.toBe("hello");
      expect(server.output()).not.toMatch(/permission denied/);
    } finally {
      await client.close();
      await server.stop();
    }
    const [inPublic] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'`;
    expect(inPublic?.n).toBe(0);
    const [owned] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_class WHERE relowner = (SELECT oid FROM pg_roles WHERE rolname = ${role})`;
    expect(owned?.n).toBe(0);
  }, 120_000);

  it("a schema one migration behind refuses the runtime role; one ahead starts it unready", async () => {
    const [last] = await db.sql`DELETE FROM brain.migrations WHERE version = ${LATEST} RETURNING *`;
    try {
      const behind = await spawnServer({ databaseUrl: appUrl, env: { BRAIN_LOG_LEVEL: "warn" } }).catch(
        (error: Error) => error,
      );
      expect(behind).toBeInstanceOf(Error);
      expect(String(behind)).toContain(
        `schema brain is at version ${LATEST - 1} and this release needs ${LATEST}, which role ${role} may not apply: run \`brain migrate\``,
      );
    } finally {
      await db.sql`INSERT INTO brain.migrations ${db.sql(last as Record<string, unknown>)}`;
    }
    // A newer release migrated further: this one starts (its statements still run), but is not
    // ready, so a rolling deploy drains it.
    await db.sql`INSERT INTO brain.migrations (version, name, checksum) VALUES (${LATEST + 1}, 'newer', 'x')`;
    const ahead = await spawnServer({ databaseUrl: appUrl, env: { BRAIN_LOG_LEVEL: "warn" } });
    try {
      const res = await fetch(`${ahead.url}/readyz`);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({
        migrations: false,
        schemaVersion: { expected: LATEST, applied: LATEST + 1 },
      });
    } finally {
      await ahead.stop();
      await db.sql`DELETE FROM brain.migrations WHERE version = ${LATEST + 1}`;
    }
  }, 120_000);
});
