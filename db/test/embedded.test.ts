import { spawnSync } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { connect } from "@aexhq/brain-db/connect";
import { type EmbeddedPostgres, startEmbeddedPostgres } from "@aexhq/brain-db/embedded";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT, spawnNode } from "../../testkit/server-process.js";

// The tests run in order on one data directory: initialise, reuse, recover from a killed parent,
// recover from a stale pid file.
let dir: string;
let dataDir: string;
const started: EmbeddedPostgres[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "brain-embedded-"));
  // mkdtemp makes it 0700; run as root, Postgres runs as the postgres user and must reach dataDir.
  await chmod(dir, 0o755);
  dataDir = join(dir, "pg");
});

afterAll(async () => {
  await Promise.all(started.map((pg) => pg.stop()));
  await rm(dir, { recursive: true, force: true });
});

describe("startEmbeddedPostgres", () => {
  it("initialises a cluster, serves queries and stops", async () => {
    const pg = await start();
    expect(await query(pg.url, "SELECT 1 AS one")).toEqual([{ one: 1 }]);
    await query(pg.url, "CREATE DATABASE kept");
    await pg.stop();
    await expect(readFile(join(dataDir, "postmaster.pid"))).rejects.toThrow(/ENOENT/);
  });

  it("reuses the cluster on the next start", async () => {
    const pg = await start();
    expect(await query(pg.url, "SELECT datname FROM pg_database WHERE datname = 'kept'")).toHaveLength(1);
    await pg.stop();
  });

  it("replaces the postmaster a killed parent left running", async () => {
    const script = join(dir, "start.mjs");
    await writeFile(
      script,
      `const { startEmbeddedPostgres } = await import(process.argv[2]);
       const pg = await startEmbeddedPostgres({ dataDir: process.argv[3] });
       console.log("ready " + pg.url);
       setInterval(() => {}, 60_000);`,
    );
    const parent = spawnNode(script, {
      args: [pathToFileURL(join(REPO_ROOT, "db/dist/exports/embedded.js")).href, dataDir],
    });
    const [, orphanUrl] = await parent.waitForLine(/^ready (\S+)$/m);
    const orphanPid = await postmasterPid();
    await parent.kill("SIGKILL");
    expect(isAlive(orphanPid)).toBe(true);

    const pg = await start();
    expect(await query(pg.url, "SELECT 1 AS one")).toEqual([{ one: 1 }]);
    expect(await postmasterPid()).not.toBe(orphanPid);
    await expect(query(orphanUrl ?? "", "SELECT 1")).rejects.toThrow(/ECONNREFUSED/);
    await pg.stop();
  });

  it("removes a postmaster.pid whose process is dead", async () => {
    const deadPid = spawnSync(process.execPath, ["-e", ""]).pid;
    await writeFile(join(dataDir, "postmaster.pid"), `${deadPid}\n${dataDir}\n0\n5432\n\n127.0.0.1\n0 0\nready\n`);
    const pg = await start();
    expect(await query(pg.url, "SELECT 1 AS one")).toEqual([{ one: 1 }]);
    await pg.stop();
  });
});

async function start(): Promise<EmbeddedPostgres> {
  const pg = await startEmbeddedPostgres({ dataDir });
  started.push(pg);
  return pg;
}

async function query(url: string, text: string): Promise<unknown[]> {
  const sql = connect(url, { schema: "public", max: 1 });
  try {
    return [...(await sql.unsafe(text))];
  } finally {
    await sql.end();
  }
}

async function postmasterPid(): Promise<number> {
  return Number((await readFile(join(dataDir, "postmaster.pid"), "utf8")).split("\n")[0]);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
