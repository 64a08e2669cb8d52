// Drives a worker through the database exactly as a Brain server does: a session whose tools hold
// a component placement, the component's row, and, per call, `tool_call_started` with a pending
// component call and its pg-boss job, all in one transaction.
import { createHash, randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CommitFeed, channelFor } from "@aexhq/brain-db/commits";
import type { Sql } from "@aexhq/brain-db/connect";
import { appendRecords, createSession, type NewSession, registerServer } from "@aexhq/brain-db/ops";
import { enqueueWorkerJob, startBoss } from "@aexhq/brain-db/queue";
import { JournalWriter } from "@aexhq/brain-db/writer";
import { type ComponentLimits, type Logger, type RunningWorker, startWorker } from "@aexhq/brain-worker";
import type { PgBoss } from "pg-boss";
import { pino } from "pino";
import { beforeAll } from "vitest";
import { testComponent } from "../../testkit/components.js";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { loopbackEgressConfig } from "../../testkit/egress.js";
import { startedBeforeAll } from "../../testkit/fixtures.js";
import { TEST_SECRET_KEY } from "../../testkit/secrets.js";
import { type NodeProcess, REPO_ROOT, spawnNode } from "../../testkit/server-process.js";
import { until } from "../../testkit/wait.js";

export interface Harness {
  db: TestDatabase;
  boss: PgBoss;
  writer: JournalWriter;
  /** A server row that owns the test sessions (no server process runs). */
  ownerId: string;
  close(): Promise<void>;
}

/** On a fresh test database, or on `given` (migrated: a Postgres of the test's own, say). */
export async function startHarness(given?: TestDatabase): Promise<Harness> {
  const db = given ?? (await createTestDatabase({ max: 8 }));
  const ownerId = randomUUID();
  await registerServer(db.sql, ownerId);
  const boss = await startBoss(db.sql, "brain", () => {});
  const writer = new JournalWriter(db.sql, { channel: channelFor("brain"), origin: ownerId });
  return {
    db,
    boss,
    writer,
    ownerId,
    async close() {
      await boss.stop({ graceful: false, timeout: 1000 }).catch(() => {});
      await db.drop();
    },
  };
}

/** Stores a component as the server's upload does (content-addressed); returns its sha256. */
export async function uploadComponent(sql: Sql, bytes: Buffer): Promise<string> {
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  await sql`
    INSERT INTO components (sha256, bytes, size, wit) VALUES (${sha256}, ${bytes}, ${bytes.length}, '(test)')
    ON CONFLICT (sha256) DO NOTHING`;
  return sha256;
}

export interface ComponentTool {
  sha256: string;
  name?: string;
  /** The Environment's filesystem grant. */
  workspace?: "read" | "write";
  options?: unknown;
  /** The advertised JSON Schemas (default: any object in, no output schema). */
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown> | null;
}

/** A session with component tools (and an optional workspace); returns its id. */
export async function createComponentSession(
  h: Harness,
  tools: ComponentTool[],
  workspace: Record<string, string> = {},
  /** The session's model; tools reach it through the WIT `model` import. */
  model: unknown = { provider: "scripted", script: [] },
  id: string = randomUUID(),
  /** Its sealed secrets (a provider's key, see sealSessionSecrets). */
  secrets: NewSession["secrets"] = [],
): Promise<string> {
  const placements = tools.map((t) => ({
    name: t.name ?? "tool",
    description: "a test component",
    inputSchema: t.inputSchema ?? { type: "object" },
    outputSchema: t.outputSchema ?? null,
    env: { type: "brain", name: "test", ...(t.workspace ? { filesystem: { workspace: t.workspace } } : {}) },
    implementation: { type: "component", sha256: t.sha256 },
    ...(t.options === undefined ? {} : { options: t.options }),
  }));
  await createPlacedSession(h, placements, { id, model, secrets });
  for (const [path, content] of Object.entries(workspace)) {
    await h.db
      .sql`INSERT INTO workspace_files (session_id, path, content) VALUES (${id}, ${path}, ${Buffer.from(content)})`;
  }
  return id;
}

/**
 * A session owned by the harness's server row with these placed tools, and whatever else of a
 * session `extra` gives (its id, model, secrets, Environments); returns its id.
 */
export async function createPlacedSession(
  h: Harness,
  placements: ({ name: string } & Record<string, unknown>)[],
  extra: Partial<Omit<NewSession, "tools" | "ownerId" | "created">> = {},
): Promise<string> {
  const id = extra.id ?? randomUUID();
  await h.writer.submit(
    createSession({
      hostId: null,
      model: { provider: "scripted", script: [] },
      metadata: {},
      ...extra,
      id,
      tools: placements,
      ownerId: h.ownerId,
      created: {
        model: { provider: "scripted" },
        tools: placements.map((p) => ({ name: p.name, env: p.env })),
        hostId: null,
      },
    }),
  );
  return id;
}

/** Starts one activation of the session; returns its seq (the calls' budget key). */
export async function startActivation(h: Harness, sessionId: string): Promise<number> {
  const { records } = await h.writer.submit(
    appendRecords(sessionId, [{ kind: "activation_started", payload: { cause: "user_message" } }]),
  );
  return records[0]!.seq;
}

export interface CallOptions {
  tool?: string;
  input: unknown;
  /** Epoch ms; null (default) for unlimited. */
  deadline?: number | null;
  activation?: number;
  /** The job's owner group (a token's id; null, the default: the operator's). */
  owner?: string | null;
}

/** What the server commits when its Agentloop calls a component tool; returns the call's seq. */
export async function callComponent(h: Harness, sessionId: string, call: CallOptions): Promise<number> {
  const activation = call.activation ?? (await startActivation(h, sessionId));
  const tool = call.tool ?? "tool";
  const deadline = call.deadline ?? null;
  return h.db.sql.begin(async (tx) => {
    const { records } = await appendRecords(sessionId, [
      {
        kind: "tool_call_started",
        payload: { tool, callId: randomUUID(), input: call.input, activation, deadline },
        call: {
          tool,
          activationSeq: activation,
          hostId: null,
          connectionId: null,
          state: "pending",
          deadlineAt: deadline,
          executor: "worker",
        },
      },
    ]).run(tx);
    const seq = records[0]!.seq;
    await enqueueWorkerJob(h.boss, tx, { sessionId, seq }, call.owner ?? null);
    return seq;
  });
}

export interface CallRow {
  state: string;
  outcome: { status: string; value?: unknown; error?: { code: string; message: string; details?: unknown } } | null;
  connection_id: string | null;
}

export async function callRow(sql: Sql, sessionId: string, seq: number): Promise<CallRow> {
  const [row] = await sql<CallRow[]>`
    SELECT state, outcome, connection_id FROM calls WHERE session_id = ${sessionId} AND seq = ${seq}`;
  if (!row) throw new Error(`no call ${sessionId}:${seq}`);
  return row;
}

export async function waitForEnd(sql: Sql, sessionId: string, seq: number, timeoutMs = 30_000): Promise<CallRow> {
  return until(
    `call ${seq} to end`,
    async () => {
      const row = await callRow(sql, sessionId, seq);
      return row.state === "ended" ? row : null;
    },
    timeoutMs,
  );
}

export interface JournalRecord {
  seq: number;
  kind: string;
  payload: {
    call?: number;
    data?: unknown;
    outcome?: CallRow["outcome"];
    kind?: string;
    code?: string;
    bytes?: number;
  };
}

/** The records of one call after its tool_call_started, in order. */
export async function callRecords(sql: Sql, sessionId: string, seq: number): Promise<JournalRecord[]> {
  return sql<JournalRecord[]>`
    SELECT seq, kind, payload FROM records
    WHERE session_id = ${sessionId} AND seq > ${seq} AND (payload->>'call')::bigint = ${seq}
    ORDER BY seq`;
}

/** Transpiled components shared by the test files (a cache is safe to share between workers). */
export const SHARED_CACHE = join(REPO_ROOT, ".brain-test", "component-cache");

/**
 * `npm run worker` as a process of its own on `databaseUrl`, with only what it needs (the shared
 * cache, warnings); `env` adds to it. Resolves with its id once its banner says it consumes.
 */
export async function spawnWorkerProcess(
  databaseUrl: string,
  env: Record<string, string> = {},
  readyWithinMs = 30_000,
): Promise<{ proc: NodeProcess; id: string }> {
  const proc = spawnNode("worker/dist/main.js", {
    env: { DATABASE_URL: databaseUrl, BRAIN_WORKER_CACHE_DIR: SHARED_CACHE, BRAIN_LOG_LEVEL: "warn", ...env },
  });
  const [, id] = await proc.waitForLine(/^Brain worker ready \(id ([0-9a-f-]{36}),/m, readyWithinMs);
  return { proc, id: id! };
}

/** A fresh cache directory: the next load of any component is a cold start. */
export function freshCacheDir(): string {
  return mkdtempSync(join(tmpdir(), "brain-worker-cache-"));
}

/** The worker's log lines (pino JSON), kept in memory so a test can look for what it logged. */
export interface CapturedLog {
  logger: Logger;
  lines: Record<string, unknown>[];
}

export function captureLog(): CapturedLog {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: "debug" },
    {
      write(line: string) {
        lines.push(JSON.parse(line) as Record<string, unknown>);
        if (process.env.BRAIN_TEST_LOG) process.stderr.write(line);
      },
    },
  );
  return { logger, lines };
}

export type Answer = { ok?: unknown; err?: string };

/** The answers a script finished with (`finish-answers`): one per step, after the invocation's own. */
export function answersOf(row: CallRow): Answer[] {
  const value = row.outcome?.value as { answers?: Answer[] } | undefined;
  if (!value?.answers) throw new Error(`the call did not finish with its answers: ${JSON.stringify(row.outcome)}`);
  return value.answers;
}

/** The answers a script step `telemetry-answers` logged (it runs after its call ended). */
/**
 * The host functions' answers a script reported through telemetry, for the call `seq`: the log is
 * shared by a file's tests, so another call's line could otherwise be found first.
 */
export async function telemetryAnswers(log: CapturedLog, seq: number): Promise<{ ok?: unknown; err?: string }[]> {
  const line = await until("answers in telemetry", () =>
    log.lines.findLast((l) => typeof l.telemetry === "string" && l.telemetry.startsWith("answers:") && l.seq === seq),
  );
  return JSON.parse((line.telemetry as string).slice("answers:".length)) as { ok?: unknown; err?: string }[];
}

export interface WorkerOverrides {
  cacheDir?: string;
  maxEmittedBytes?: number;
  concurrency?: number;
  maxModelCalls?: number;
  log?: Logger;
  afterEndGraceMs?: number;
  /** A feed to hear commits from instead of the worker's own LISTEN. */
  commits?: CommitFeed;
  /** How often it looks for ended calls untold (a long one: only what it hears stops a call). */
  backstopMs?: number;
  /** What one component call may take (the defaults otherwise). */
  componentLimits?: ComponentLimits;
}

/** A worker in this process (the shared cache unless another is given). */
export function inProcessWorker(h: Harness, overrides: WorkerOverrides = {}): Promise<RunningWorker> {
  return startWorker({
    databaseUrl: h.db.url,
    schema: "brain",
    maxEmittedBytes: overrides.maxEmittedBytes ?? 1024 * 1024,
    concurrency: overrides.concurrency ?? 4,
    cacheDir: overrides.cacheDir ?? SHARED_CACHE,
    logLevel: "silent",
    maxModelCalls: overrides.maxModelCalls ?? 100,
    secretKeys: [Buffer.from(TEST_SECRET_KEY, "hex")],
    ...loopbackEgressConfig(),
    log: overrides.log ?? captureLog().logger,
    ...(overrides.afterEndGraceMs === undefined ? {} : { afterEndGraceMs: overrides.afterEndGraceMs }),
    ...(overrides.commits ? { commits: overrides.commits } : {}),
    ...(overrides.backstopMs === undefined ? {} : { backstopMs: overrides.backstopMs }),
    ...(overrides.componentLimits ? { componentLimits: overrides.componentLimits } : {}),
  });
}

/** For each setup hook below: a fresh checkout builds the test component first. */
const SETUP_MS = 180_000;

/** A harness started before the file's (or suite's) tests and closed after them. */
export function harnessForTests(): Harness {
  return startedBeforeAll(startHarness, { timeoutMs: SETUP_MS });
}

/** The script component (worker/test/fixtures/script.js), stored in h's database before the tests. */
export function scriptComponent(h: Harness): { sha256: string } {
  return startedBeforeAll(async () => ({ sha256: await uploadComponent(h.db.sql, await testComponent("script")) }), {
    stop: () => {},
    timeoutMs: SETUP_MS,
  });
}

export interface ScriptSessionOptions {
  /** The placement's options (the tool's `options`). */
  options?: unknown;
  /** The session's model, as createComponentSession takes it. */
  model?: unknown;
  /** The session's sealed secrets, as createComponentSession takes them. */
  secrets?: NewSession["secrets"];
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown> | null;
}

/**
 * The id of a session whose one tool ("tool") is the script component, created before the tests.
 * The id is chosen now, so a file holds it as a plain constant.
 */
export function scriptSession(h: Harness, session: ScriptSessionOptions = {}): string {
  const id = randomUUID();
  beforeAll(async () => {
    const sha256 = await uploadComponent(h.db.sql, await testComponent("script"));
    const { options, inputSchema, outputSchema } = session;
    await createComponentSession(
      h,
      [{ sha256, options, inputSchema, outputSchema }],
      {},
      session.model,
      id,
      session.secrets,
    );
  }, SETUP_MS);
  return id;
}

/** An in-process worker on h for the tests (stopped after them), logging into `log`. */
export function workerForTests(
  h: Harness,
  overrides: Omit<WorkerOverrides, "log"> = {},
): { worker: RunningWorker; log: CapturedLog } {
  const log = captureLog();
  const worker = startedBeforeAll(() => inProcessWorker(h, { log: log.logger, ...overrides }), {
    stop: (w) => w.stop(),
    timeoutMs: SETUP_MS,
  });
  return { worker, log };
}

/**
 * What most of these files run on: a harness, a session of the script component and an in-process
 * worker, started before the file's tests and stopped after them (the worker first).
 */
export function scriptWorker(options: { session?: ScriptSessionOptions; worker?: Omit<WorkerOverrides, "log"> } = {}): {
  h: Harness;
  session: string;
  worker: RunningWorker;
  log: CapturedLog;
} {
  const h = harnessForTests();
  const session = scriptSession(h, options.session);
  return { h, session, ...workerForTests(h, options.worker) };
}

export type { RunningWorker };
