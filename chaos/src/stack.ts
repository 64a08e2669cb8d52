// The processes under test: two servers on one database (fixed ports, so restarts keep their
// address), one worker, two host processes each serving its sessions through one of the servers.
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ScriptStep } from "@aexhq/brain-contracts";
import type { HostSpec } from "./host.js";
import { Managed, type UnexpectedExit } from "./processes.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const LISTENING = /^Brain listening on (http:\/\/\S+)$/;

export interface Stack {
  token: string;
  servers: Managed[];
  serverUrls: string[];
  workers: Managed[];
  hosts: Managed[];
  /** Record files of the host processes (JSON lines, see host-tools.ts). */
  hostRecordFiles: string[];
  all(): Managed[];
}

export async function startStack(options: {
  runDir: string;
  databaseUrl: string;
  /** BRAIN_DIRECT_URL, when `databaseUrl` goes through a pooler and LISTEN should not. */
  directUrl?: string;
  targetUrl: string;
  scripts: ScriptStep[][][];
  onUnexpectedExit: (exit: UnexpectedExit) => void;
}): Promise<Stack & { sessions: string[] }> {
  const { runDir, databaseUrl } = options;
  const token = randomBytes(24).toString("base64url");
  const secretKey = randomBytes(32).toString("hex");
  // The HTTP Environment the hosts' sessions call is served on loopback, which Brain reaches only
  // where BRAIN_EGRESS_ALLOW opens it.
  const common = {
    DATABASE_URL: databaseUrl,
    BRAIN_SECRET_KEY: secretKey,
    BRAIN_LOG_LEVEL: "warn",
    BRAIN_EGRESS_ALLOW: "127.0.0.0/8",
    ...(options.directUrl ? { BRAIN_DIRECT_URL: options.directUrl } : {}),
  };
  const managed = (name: string, script: string, env: Record<string, string>, ready: RegExp) =>
    new Managed(
      name,
      join(ROOT, script),
      () => [],
      () => env,
      ready,
      runDir,
      options.onUnexpectedExit,
    );

  const ports = [await freePort(), await freePort()];
  const servers = ports.map((port, i) => {
    const dataDir = join(runDir, `server-${i}`);
    mkdirSync(dataDir, { recursive: true });
    return managed(
      `server-${i}`,
      "server/dist/main.js",
      { ...common, BRAIN_HOST: "127.0.0.1", BRAIN_PORT: String(port), BRAIN_API_TOKEN: token, BRAIN_DATA_DIR: dataDir },
      LISTENING,
    );
  });
  const serverUrls = ports.map((port) => `http://127.0.0.1:${port}`);
  // The first server migrates the database; the second then finds it migrated.
  for (const s of servers) await s.start();

  const workers = [
    managed(
      "worker-0",
      "worker/dist/main.js",
      { ...common, BRAIN_WORKER_CACHE_DIR: join(runDir, "worker-cache"), BRAIN_DATA_DIR: join(runDir, "worker-0") },
      /^Brain worker ready/,
    ),
  ];
  for (const w of workers) await w.start();

  const hostRecordFiles: string[] = [];
  const sessions: string[] = [];
  const hosts = options.scripts.map((scripts, i) => {
    const spec: HostSpec = {
      url: serverUrls[i % serverUrls.length]!,
      token,
      targetUrl: options.targetUrl,
      scripts,
      stateFile: join(runDir, `host-${i}.state.json`),
      recordFile: join(runDir, `host-${i}.records.jsonl`),
    };
    hostRecordFiles.push(spec.recordFile);
    const specFile = join(runDir, `host-${i}.spec.json`);
    writeFileSync(specFile, JSON.stringify(spec));
    return managed(`host-${i}`, "chaos/dist/host.js", { CHAOS_HOST_SPEC: specFile }, /^chaos host ready (.*)$/);
  });
  for (const h of hosts) {
    const [, ids] = await h.start(60_000);
    sessions.push(...(JSON.parse(ids ?? "[]") as string[]));
  }
  return {
    token,
    servers,
    serverUrls,
    workers,
    hosts,
    hostRecordFiles,
    sessions,
    all: () => [...servers, ...workers, ...hosts],
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject()));
    });
  });
}
