// Finding 7 of the tenant review: BRAIN_SECRET_KEY could not be rotated (one key, no keyring). It
// is now a ring, the sealing key first: a server given a new key before the old one still opens
// what the old one sealed and seals anew with the new one; `brain keys rotate` re-seals the rest,
// after which the old key can leave the ring.
import { randomBytes } from "node:crypto";
import { Brain } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { brain, emptyDataDir } from "../../../cli/test/support.js";
import { startBrain } from "../../../testkit/brain.js";
import { createTestDatabase } from "../../../testkit/database.js";
import { startFakeOpenAI } from "../../../testkit/fake-providers.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";

const db = startedBeforeAll(() => createTestDatabase({ max: 20 }), { stop: (d) => d.drop() });
const provider = startedBeforeAll(() => startFakeOpenAI());
const [oldKey, newKey] = [randomBytes(32).toString("hex"), randomBytes(32).toString("hex")];

/** Starts a server on the shared database with this ring, runs `work` with a client, stops it. */
async function withServer(ring: string, work: (client: Brain) => Promise<void>): Promise<void> {
  const server = await startBrain({ db, env: { BRAIN_SECRET_KEY: ring } });
  const client = new Brain({ url: server.url, token: server.token });
  try {
    await work(client);
  } finally {
    await client.close();
    await server.close();
  }
}

/** A turn of the session: the fake provider sees the API key the server opened for it. */
async function keyPresented(client: Brain, sessionId: string): Promise<string | undefined> {
  provider.reply({ text: "hi" });
  const before = provider.requests.length;
  await (await client.sessions.get(sessionId)).send("hello");
  return String(provider.requests[before]?.headers.authorization).replace(/^Bearer /, "");
}

const sealedUnder = async () =>
  (await db.sql<{ key_id: string }[]>`SELECT key_id FROM brain.session_secrets ORDER BY key_id`).map((r) => r.key_id);

describe("rotating BRAIN_SECRET_KEY", () => {
  it("opens the old key's secrets with the ring, re-seals them, and lets the old key go", async () => {
    const apiKey = `sk-test-${randomBytes(12).toString("hex")}`;
    let sessionId = "";
    await withServer(oldKey, async (client) => {
      const session = await client.sessions.create({
        model: { provider: "openai", name: "m", apiKey, baseUrl: provider.url },
      });
      sessionId = session.id;
      expect(await keyPresented(client, sessionId)).toBe(apiKey);
    });
    const [oldId] = await sealedUnder();

    await withServer(`${newKey},${oldKey}`, async (client) => {
      // Sealed under the old key, opened with the ring.
      expect(await keyPresented(client, sessionId)).toBe(apiKey);
      await client.sessions.create({ model: { provider: "openai", name: "m", apiKey, baseUrl: provider.url } });
    });
    const ids = new Set(await sealedUnder());
    expect(ids.size).toBe(2);
    expect(ids.has(oldId!)).toBe(true);

    const env = { DATABASE_URL: db.url, BRAIN_DATA_DIR: emptyDataDir() };
    // Without the old key, its secrets cannot be opened: status says so.
    expect((await brain(["keys", "status"], { ...env, BRAIN_SECRET_KEY: newKey })).code).toBe(1);
    const rotated = await brain(["keys", "rotate"], { ...env, BRAIN_SECRET_KEY: `${newKey},${oldKey}` });
    expect([rotated.code, rotated.output]).toEqual([0, expect.stringMatching(/^re-sealed 1 secrets under /m)]);
    expect(new Set(await sealedUnder()).size).toBe(1);
    expect((await brain(["keys", "status"], { ...env, BRAIN_SECRET_KEY: newKey })).code).toBe(0);

    // The old key is gone from the ring; the session's secret opens all the same.
    await withServer(newKey, async (client) => {
      expect(await keyPresented(client, sessionId)).toBe(apiKey);
    });
  });

  it("prints a new key with keys generate", async () => {
    const generated = await brain(["keys", "generate"], { BRAIN_DATA_DIR: emptyDataDir() });
    expect([generated.code, generated.output.trim()]).toEqual([0, expect.stringMatching(/^[0-9a-f]{64}$/)]);
  });
});
