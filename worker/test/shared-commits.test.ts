// A worker in a server's process (`brain start`) hears of commits through the server's feed, not a
// LISTEN of its own (Postgres wakes every listening backend at every notifying commit): it opens
// none, and a call ended elsewhere still stops at once, its component and its model requests.
// The worker's backstop (its periodic look for ended calls) is pushed past the tests, so only
// what it hears can stop anything here.
import { randomUUID } from "node:crypto";
import { sealSessionSecrets, storedModelConfig } from "@aexhq/brain-core/models";
import { CommitFanout, channelFor } from "@aexhq/brain-db/commits";
import { endCalls } from "@aexhq/brain-db/ops";
import { SecretBox } from "@aexhq/brain-db/secrets";
import { JournalWriter } from "@aexhq/brain-db/writer";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type FakeProvider, startFakeOpenAI } from "../../testkit/fake-providers.js";
import { TEST_SECRET_KEY } from "../../testkit/secrets.js";
import { backendsNamed, until } from "../../testkit/wait.js";
import { callComponent, callRecords, harnessForTests, scriptSession, waitForEnd, workerForTests } from "./support.js";

const feed = new CommitFanout();
let provider: FakeProvider;
beforeAll(async () => {
  provider = await startFakeOpenAI({ apiKey: "sk-feed" });
});
const h = harnessForTests();
const session = scriptSession(h);
const model = () => ({ provider: "openai" as const, name: "gpt-test", apiKey: "sk-feed", baseUrl: provider.url });
const box = new SecretBox(Buffer.from(TEST_SECRET_KEY, "hex"));
// Read when the session is created (after the provider started).
const modelSession: string = scriptSession(h, {
  get model() {
    return storedModelConfig(model());
  },
  get secrets() {
    return sealSessionSecrets(box, modelSession, { model: model() });
  },
});
const { log } = workerForTests(h, { commits: feed, backstopMs: 600_000 });
// What the server's writer does in `brain start`: each commit goes to the feed with its origin.
let server: JournalWriter | undefined;
const serverWriter = () => {
  const origin = randomUUID();
  server ??= new JournalWriter(h.db.sql, {
    channel: channelFor("brain"),
    origin,
    onCommit: (keys) => feed.publish(keys, origin),
  });
  return server;
};
afterAll(async () => {
  await server?.close();
  await provider?.close();
});

const cancel = (sessionId: string, seq: number) =>
  serverWriter().submit(endCalls({ sessionId, seqs: [seq] }, { status: "cancelled", cause: "sdk_cancel" }));

it("opens no LISTEN of its own", async () => {
  expect(await backendsNamed(h.db.sql, "brain-listener")).toBe(0);
});

it("a call cancelled elsewhere, heard through the feed, stops its component at once", async () => {
  const seq = await callComponent(h, session, {
    input: { steps: [{ op: "emit", kind: "looping", data: null }, { op: "loop" }] },
  });
  await until("the component is running", async () => (await callRecords(h.db.sql, session, seq)).length > 0);
  await cancel(session, seq);
  await until("the component stopped", () =>
    log.lines.some((l) => l.msg === "component stopped" && l.seq === seq && l.reason === "ended"),
  );
  expect((await waitForEnd(h.db.sql, session, seq)).outcome).toEqual({ status: "cancelled", cause: "sdk_cancel" });
});

it("a call cancelled elsewhere stops its pending model request, recorded unknown", async () => {
  provider.reply({ kind: "hang" });
  const before = provider.requests.length;
  const seq = await callComponent(h, modelSession, {
    input: { steps: [{ op: "model", request: { messages: [{ role: "user", content: "slow question" }] } }] },
  });
  await provider.waitForRequests(before + 1);
  await cancel(modelSession, seq);
  const ended = await until("the model call to end", async () => {
    const rows = await h.db.sql<{ payload: { outcome: unknown } }[]>`
      SELECT payload FROM records WHERE session_id = ${modelSession} AND kind = 'model_call_ended'`;
    return rows[0];
  });
  expect(ended.payload.outcome).toMatchObject({ status: "unknown", cause: "call_ended" });
  // The provider saw its request abandoned, not answered.
  await expect(provider.requests[before]!.closed).resolves.toEqual({ completed: false });
});
