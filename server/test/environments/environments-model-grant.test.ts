// "HTTP Environments call the granted model execution service": an HTTP Environment whose grants
// include `model` gets, with each invocation, the URL and a call-scoped token with which the
// service behind it calls the session's model for that call, journaled with the tool as origin.
// Without the grant it gets neither, and the route refuses the call. Real server, real worker, a
// local HTTP service.
import { Brain, httpEnv, tool } from "@aexhq/brain";
import { callbackToken, SecretBox } from "@aexhq/brain-db/secrets";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type BrainWithWorker, startBrainWithWorker } from "../../../testkit/brain-with-worker.js";
import { type JsonServer, startJsonServer } from "../../../testkit/json-server.js";
import { TEST_SECRET_KEY } from "../../../testkit/secrets.js";
import { journalOf } from "../../../testkit/tool-harness.js";

let stack: BrainWithWorker;
let service: JsonServer;
const answers: unknown[] = [];

beforeAll(async () => {
  stack = await startBrainWithWorker();
  // The service behind the Environment: it asks the session's model when it was given the way to.
  service = await startJsonServer(async (req) => {
    const url = req.headers["brain-model-url"];
    const token = req.headers["brain-call-token"];
    if (typeof url !== "string" || typeof token !== "string") return { body: { summary: null, granted: false } };
    const res = await fetch(url, {
      method: "POST",
      headers: { "brain-call-token": token, "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "user", content: `Summarise ${req.path}` }] }),
    });
    const answer = await res.json();
    answers.push({ status: res.status, answer });
    return { body: { summary: (answer as { text?: string }).text ?? null, granted: true } };
  });
}, 60_000);
afterAll(async () => {
  await stack?.close();
  await service?.close();
});

const summarizeRemote = tool({
  name: "summarize_remote",
  description: "A summary made by a remote service.",
  input: z.object({ doc: z.string() }),
  implementation: () => ({ type: "http_json", method: "GET", path: "/docs/{doc}" }),
});

async function run(grants: { model?: boolean } | undefined) {
  const client = new Brain({ url: stack.brain.url, token: stack.brain.token });
  try {
    const env = httpEnv({ name: "summarizer", baseUrl: service.url, ...(grants ? { grants } : {}) });
    const session = await client.sessions.create({
      model: {
        provider: "scripted",
        script: [{ toolCalls: [{ name: "summarize_remote", input: { doc: "rfc" } }] }, { text: "done" }],
        toolScript: [{ text: "a remote summary" }],
      },
      tools: [summarizeRemote({ env })],
    });
    expect(await session.send("go")).toBe("done");
    return { id: session.id, journal: await journalOf(stack.brain.db.sql, session.id) };
  } finally {
    await client.close();
  }
}

describe("the granted model execution service", () => {
  it("lets the service behind a granting Environment call the session's model for the call", async () => {
    const { id, journal } = await run({ model: true });
    const call = journal.find((r) => r.kind === "tool_call_started")!;
    expect(journal.find((r) => r.kind === "tool_call_ended")?.payload.outcome).toEqual({
      status: "ok",
      value: { summary: "a remote summary", granted: true },
    });
    const started = journal.find(
      (r) => r.kind === "model_call_started" && (r.payload.origin as { type: string } | undefined)?.type === "tool",
    );
    expect(started?.payload.origin).toEqual({ type: "tool", sessionId: id, sequence: call.seq });
    // The token is the call's credential: it never enters the journal.
    const request = service.requests.at(-1)!;
    const token = request.headers["brain-call-token"] as string;
    const [leaks] = await stack.brain.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM records WHERE payload::text LIKE ${`%${token.split(".")[1]}%`}`;
    expect(leaks?.n).toBe(0);

    // Once the call has ended the token is worth nothing.
    const after = await fetch(request.headers["brain-model-url"] as string, {
      method: "POST",
      headers: { "brain-call-token": token, "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "user", content: "again" }] }),
    });
    expect(after.status).toBe(409);
    expect(((await after.json()) as { error: { code: string } }).error.code).toBe("call_ended");
  });

  it("gives an Environment without the grant neither the URL nor a token", async () => {
    const { journal } = await run(undefined);
    expect(journal.find((r) => r.kind === "tool_call_ended")?.payload.outcome).toEqual({
      status: "ok",
      value: { summary: null, granted: false },
    });
    expect(journal.some((r) => (r.payload.origin as { type?: string } | undefined)?.type === "tool")).toBe(false);
  });

  it("refuses requests without a valid call token, and calls whose Environment grants nothing", async () => {
    const { id, journal } = await run(undefined);
    const seq = journal.find((r) => r.kind === "tool_call_started")!.seq;
    const url = `${stack.brain.url}/v1/calls/${id}/${seq}/model`;
    const body = JSON.stringify({ messages: [{ role: "user", content: "x" }] });
    for (const token of [undefined, "forged", `${"0".repeat(8)}-0000-0000-0000-${"0".repeat(12)}.${"A".repeat(43)}`]) {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...(token ? { "brain-call-token": token } : {}) },
        body,
      });
      expect(res.status).toBe(401);
    }
    // The operator token is not a call token either.
    const operator = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${stack.brain.token}` },
      body,
    });
    expect(operator.status).toBe(401);
    // A genuine token of this call (as its worker would mint it): the Environment grants no model.
    const [row] = await stack.brain.db.sql<{ connection_id: string }[]>`
      SELECT connection_id FROM calls WHERE session_id = ${id} AND seq = ${seq}`;
    const genuine = callbackToken(
      new SecretBox(Buffer.from(TEST_SECRET_KEY, "hex")),
      "model",
      { sessionId: id, seq, deadline: null },
      row!.connection_id,
    );
    const refused = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "brain-call-token": genuine },
      body,
    });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("model_not_granted");
  });
});
