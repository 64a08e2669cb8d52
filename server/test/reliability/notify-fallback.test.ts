import { Brain } from "@aexhq/brain";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../testkit/database.js";
import { parseExposition } from "../../../testkit/metrics.js";
import { type PgProxy, startPgProxy } from "../../../testkit/pg-proxy.js";
import { type ServerProcess, spawnServer } from "../../../testkit/server-process.js";
import { scripted } from "../../../testkit/turns.js";

// A server whose database connection loses every notification (as behind a transaction-mode
// pooler: LISTEN succeeds, nothing arrives) finds so at start, says so, and falls back to polling:
// a message another server appends to one of its sessions is still answered.

let db: TestDatabase;
let proxy: PgProxy;
const servers: ServerProcess[] = [];
const token = `notify-fallback-${Date.now()}-token`;

beforeAll(async () => {
  db = await createTestDatabase();
  proxy = await startPgProxy(db.url);
  proxy.dropNotifications();
}, 60_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop().catch(() => {})));
  await proxy?.close();
  await db?.drop();
});

async function polling(server: ServerProcess): Promise<number | undefined> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  return parseExposition(await res.text()).find((s) => s.name === "brain_wakeups_polling")?.value;
}

it("detects a LISTEN that never hears, warns, and wakes by polling", async () => {
  const deaf = await spawnServer({ databaseUrl: proxy.through(db.url), token, env: { BRAIN_LOG_LEVEL: "warn" } });
  servers.push(deaf);
  const direct = await spawnServer({ databaseUrl: db.url, token, env: { BRAIN_LOG_LEVEL: "warn" } });
  servers.push(direct);
  expect(deaf.output()).toMatch(/LISTEN\/NOTIFY does not deliver here .*fall back to polling/);
  expect(direct.output()).not.toMatch(/does not deliver/);
  expect(await polling(deaf)).toBe(1);
  expect(await polling(direct)).toBe(0);

  // The session runs on the deaf server; its second message is appended by the other one, whose
  // NOTIFY never reaches it.
  const onDeaf = new Brain({ url: deaf.url, token });
  const onDirect = new Brain({ url: direct.url, token });
  try {
    const s = await onDeaf.sessions.create({ model: scripted("first", "second"), tools: [] });
    await expect(s.send("one")).resolves.toBe("first");
    const same = await onDirect.sessions.get(s.id);
    // Bounded: without the fallback nothing wakes the deaf server, and the turn never runs.
    const answer = await Promise.race([
      same.send("two"),
      new Promise((resolve) => setTimeout(() => resolve("no answer in 60 s"), 60_000)),
    ]);
    expect(answer).toBe("second");
    const [owner] = await db.sql<{ owner_id: string }[]>`SELECT owner_id FROM sessions WHERE id = ${s.id}`;
    const { serverId } = (await (await fetch(`${deaf.url}/healthz`)).json()) as { serverId: string };
    expect(owner?.owner_id).toBe(serverId);
  } finally {
    await Promise.all([onDeaf.close(), onDirect.close()]);
  }
}, 120_000);
