import { ERROR_CODES, type ErrorCode } from "@aexhq/brain-contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Answer,
  activationEnded,
  countRows,
  createSession,
  hostTool,
  postMessage,
  request,
} from "../../../testkit/api.js";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { seeded } from "../../../testkit/random.js";
import { scripted } from "../../../testkit/turns.js";

// Random mutations of valid bodies: every answer is 2xx or a documented 4xx, never a 5xx, and a
// refused request writes nothing. The generator is seeded, so a failing case can be replayed.

let brain: InProcessBrain;
let sessionId: string;
let hostId: string;

beforeAll(async () => {
  brain = await startBrain();
  hostId = ((await request(brain, "POST", "/v1/hosts", { body: { name: "app" } })).json as { id: string }).id;
  sessionId = (await createSession(brain, { model: scripted("one", "two", "three") })).id;
  await postMessage(brain, sessionId, "warm up", { wait: true });
});
afterAll(async () => {
  await brain?.close();
});

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A deep copy whose objects have no prototype, so `__proto__` becomes an ordinary own key. */
function bare(value: Json): Json {
  if (Array.isArray(value)) return value.map(bare);
  if (value !== null && typeof value === "object") {
    const copy: { [key: string]: Json } = Object.create(null);
    for (const [k, v] of Object.entries(value)) copy[k] = bare(v);
    return copy;
  }
  return value;
}

function nested(depth: number): Json {
  let value: Json = "bottom";
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { a: value };
  return value;
}

const HOSTILE_KEYS = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "",
  "a".repeat(300),
];

function mutate(body: Json, rand: () => number): Json {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  const garbage = (): Json =>
    pick<() => Json>([
      () => null,
      () => true,
      () => 0,
      () => -1,
      () => 1e308,
      () => 0.5,
      () => "",
      () => "x".repeat(Math.floor(rand() * 300_000)),
      () => "\u0000\ud800\u202e",
      () => [],
      () => ({}),
      () => [1, "two", null, { three: [3] }],
      () => nested(1 + Math.floor(rand() * 3000)),
      () => bare({ __proto__: { polluted: "yes" } } as unknown as Json),
      () => bare({ constructor: { prototype: { polluted: "yes" } } }),
    ])();
  // Every container in the body, to choose where to strike.
  const containers: (Json[] | { [key: string]: Json })[] = [];
  const walk = (v: Json, depth: number) => {
    if (v !== null && typeof v === "object" && depth < 8) {
      containers.push(v);
      for (const child of Object.values(v)) walk(child, depth + 1);
    }
  };
  walk(body, 0);
  if (containers.length === 0 || rand() < 0.05) return garbage();
  const target = pick(containers);
  const keys = Object.keys(target);
  const action = rand();
  if (Array.isArray(target)) {
    if (action < 0.3 && target.length > 0) target.splice(Math.floor(rand() * target.length), 1);
    else if (action < 0.6) target.push(garbage());
    else if (target.length > 0) target[Math.floor(rand() * target.length)] = garbage();
    return body;
  }
  if (action < 0.3 && keys.length > 0) delete target[pick(keys)];
  else if (action < 0.7 && keys.length > 0) target[pick(keys)] = garbage();
  else target[pick(HOSTILE_KEYS)] = garbage();
  return body;
}

describe("fuzz", () => {
  it("a few hundred mutated bodies: always 2xx or a documented 4xx, nothing written on refusal", async () => {
    const rand = seeded(20240611);
    const targets: { path: string; body: Json; headers?: Record<string, string> }[] = [
      {
        path: "/v1/sessions",
        body: {
          model: {
            provider: "scripted",
            script: [{ text: "hi" }, { toolCalls: [{ name: "lookup", input: { id: "1" } }] }],
          },
          tools: [hostTool("lookup")],
          hostId,
          metadata: { app: "fuzz" },
        },
      },
      { path: `/v1/sessions/${sessionId}/messages`, body: { text: "hello", wait: false } },
      { path: "/v1/hosts", body: { name: "fuzzed" } },
    ];
    const keys = ["fuzz-1", "fuzz-2", "k".repeat(300)];
    const statuses = new Map<number, number>();
    const failures = new Map<string, string>();
    for (let i = 0; i < 360; i++) {
      const target = targets[i % targets.length]!;
      let body = bare(target.body);
      const rounds = 1 + Math.floor(rand() * 3);
      for (let r = 0; r < rounds; r++) body = mutate(body, rand);
      const headers: Record<string, string> = rand() < 0.2 ? { "idempotency-key": keys[i % keys.length]! } : {};
      const raw = JSON.stringify(body) ?? "null";
      const before = await countRows(brain.db.sql);
      const answer: Answer = await request(brain, "POST", target.path, {
        raw,
        contentType: "application/json",
        headers,
      });
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const label = `case ${i} ${target.path}: ${raw.slice(0, 300)} → ${answer.status} ${answer.text.slice(0, 300)}`;
      if (answer.status >= 200 && answer.status < 300) {
        const sent = answer.json as { sequence?: number; activation?: unknown };
        // A message starts an activation; let it finish so its records do not land in the next case.
        if (typeof sent.sequence === "number" && sent.activation === null)
          await activationEnded(brain.db.sql, sessionId, sent.sequence);
        continue;
      }
      const code = (answer.json as { error?: { code?: string } } | undefined)?.error?.code;
      const spec = code && Object.hasOwn(ERROR_CODES, code) ? ERROR_CODES[code as ErrorCode] : null;
      const documented = spec !== null && spec.scope === "api" && spec.http === answer.status;
      const wrote = JSON.stringify(await countRows(brain.db.sql)) !== JSON.stringify(before);
      if (!documented || answer.status >= 500 || wrote) {
        const kind = `${target.path.replace(sessionId, ":id")} → ${answer.status} ${code}${wrote ? " (wrote rows)" : ""}`;
        if (!failures.has(kind)) failures.set(kind, label);
      }
    }
    // One example per kind of failure, to keep the report readable.
    expect(Object.fromEntries(failures)).toEqual({});
    // The fuzz reached both sides: accepted bodies and refused ones.
    expect([...statuses.keys()].some((s) => s < 300)).toBe(true);
    expect([...statuses.keys()].some((s) => s >= 400)).toBe(true);
    // The server shares this process: no prototype was polluted.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((await request(brain, "GET", "/healthz", { token: null })).status).toBe(200);
  });
});
