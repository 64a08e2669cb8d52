// `npm start` with no DATABASE_URL: the embedded Postgres gets a generated password, kept with the
// other local secrets in BRAIN_DATA_DIR (mode 0600), and the banner prints a URL that works with
// psql (here postgres.js). A cluster made before generated passwords keeps its fixed one.
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres } from "@aexhq/brain-db/embedded";
import postgres from "postgres";
import { expect, it } from "vitest";
import { spawnServer } from "../../../testkit/server-process.js";

const PRINTED = /^Database: (?:PGPASSWORD="\$\(cat (\S+)\)" )?psql "(postgres:\/\/\S+)"/m;

/** Starts a server on an embedded Postgres in `dataDir`, queries brain.journal with the printed URL. */
async function startAndQuery(dataDir: string): Promise<URL> {
  const server = await spawnServer({
    databaseUrl: "",
    env: { DATABASE_URL: undefined, BRAIN_DATA_DIR: dataDir },
    startTimeoutMs: 90_000,
  });
  try {
    const [, passwordFile, printed] = PRINTED.exec(server.output()) ?? [];
    expect(printed, server.output()).toBeDefined();
    const url = new URL(printed!);
    if (passwordFile !== undefined) {
      // A generated password is not printed: the command reads it from its file.
      expect(url.password).toBe("");
      expect(passwordFile).toBe(join(dataDir, "pg-password"));
      url.password = readFileSync(passwordFile, "utf8").trim();
    }
    const res = await fetch(`${server.url}/v1/sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
      body: JSON.stringify({ model: { provider: "scripted", script: [{ text: "hi" }] } }),
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const sql = postgres(url.href, { max: 1, onnotice: () => {} });
    try {
      const rows = await sql`SELECT seq::int AS seq, kind FROM brain.journal WHERE session_id = ${id} ORDER BY seq`;
      expect(rows).toEqual([{ seq: 1, kind: "session_created" }]);
    } finally {
      await sql.end();
    }
    return url;
  } finally {
    await server.stop();
  }
}

it("generates the embedded database's password, saves it 0600 and prints a working URL", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "brain-embedded-default-"));
  const url = await startAndQuery(dataDir);
  const file = join(dataDir, "pg-password");
  expect(url.password).toBe(readFileSync(file, "utf8").trim());
  expect(url.password).not.toBe("password");
  expect(url.password.length).toBeGreaterThanOrEqual(32);
  expect(statSync(file).mode & 0o777).toBe(0o600);
  // A restart on the same data directory uses the saved password.
  expect((await startAndQuery(dataDir)).password).toBe(url.password);
}, 180_000);

it("keeps an existing cluster made with the fixed password working", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "brain-embedded-legacy-"));
  const legacy = await startEmbeddedPostgres({ dataDir: join(dataDir, "pg") });
  await legacy.stop();
  expect((await startAndQuery(dataDir)).password).toBe("password");
}, 180_000);
