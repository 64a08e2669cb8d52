// How session.send() is answered: a turn that ends within the bounded wait (`waitMs`) by the
// message post alone; a longer one, or a post whose body breaks after its headers, by the event
// stream from the sequence the headers carried, without posting the message twice. A real Brain,
// the public SDK, real sockets.
import { Brain, tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startBrain } from "../../../testkit/brain.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { scripted } from "../../../testkit/turns.js";

const server = startedBeforeAll(() => startBrain());

/** A client whose every request is listed as "METHOD /path"; `breakBody` cuts a post's answer after its headers. */
function recordingClient(options: { breakBody?: boolean } = {}) {
  const requests: string[] = [];
  const fetchImpl = (async (input: string, init: RequestInit) => {
    requests.push(`${init.method} ${new URL(input).pathname}`);
    const response = await fetch(input, init);
    if (!options.breakBody || init.method !== "POST" || !new URL(input).pathname.endsWith("/messages")) {
      return response;
    }
    void response.body?.cancel();
    const broken = new ReadableStream({
      start(controller) {
        controller.error(new TypeError("terminated"));
      },
    });
    return new Response(broken, { status: response.status, headers: response.headers });
  }) as unknown as typeof fetch;
  return { requests, client: new Brain({ url: server.url, token: server.token, fetch: fetchImpl }) };
}

async function userMessages(sessionId: string): Promise<number> {
  const [row] = await server.db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM journal WHERE session_id = ${sessionId} AND kind = 'user_message'`;
  return row!.n;
}

async function post(sessionId: string, body: unknown): Promise<Response> {
  return fetch(`${server.url}/v1/sessions/${sessionId}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

describe("session.send: the bounded wait", () => {
  it("a turn that ends within the wait is answered by the message post alone", async () => {
    const { requests, client } = recordingClient();
    try {
      const session = await client.sessions.create({ model: scripted({ text: "quick" }, { text: "again" }) });
      await expect(session.send("hello")).resolves.toBe("quick");
      await expect(session.send("hello again")).resolves.toBe("again");
      const path = `/v1/sessions/${session.id}`;
      expect(requests.filter((r) => r.startsWith(`GET ${path}/events`))).toEqual([]);
      expect(requests.filter((r) => r === `POST ${path}/messages`)).toHaveLength(2);
    } finally {
      await client.close();
    }
  });

  it("the headers carry the sequence at once; the answer waits at most waitMs and says when the turn goes on", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const hold = tool({
      name: "hold",
      description: "Holds its call until the test lets go.",
      input: z.object({}),
      run: async (_input, ctx) => {
        await released;
        return ctx.finish({ held: true });
      },
    });
    const client = new Brain({ url: server.url, token: server.token });
    try {
      const session = await client.sessions.create({
        model: scripted({ toolCalls: [{ name: "hold", input: {} }] }, { text: "let go" }),
        tools: [hold()],
      });
      const began = Date.now();
      const response = await post(session.id, { text: "go", waitMs: 400 });
      const headersAfter = Date.now() - began;
      expect(response.status).toBe(201);
      const sequence = Number(response.headers.get("brain-sequence"));
      expect(sequence).toBeGreaterThan(1);
      const answer = (await response.json()) as { sequence: number; activation: unknown };
      const bodyAfter = Date.now() - began;
      expect(answer).toEqual({ sequence, activation: null });
      expect(bodyAfter).toBeGreaterThanOrEqual(400);
      expect(headersAfter).toBeLessThan(bodyAfter);
      release();
    } finally {
      release();
      await client.close();
    }
  });

  it("a client that leaves during the wait: the turn goes on, and the server answers the next post", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const hold = tool({
      name: "hold",
      description: "Holds its call until the test lets go.",
      input: z.object({}),
      run: async (_input, ctx) => {
        await released;
        return ctx.finish({ held: true });
      },
    });
    const client = new Brain({ url: server.url, token: server.token });
    try {
      const session = await client.sessions.create({
        model: scripted({ toolCalls: [{ name: "hold", input: {} }] }, { text: "after the leaver" }, { text: "second" }),
        tools: [hold()],
      });
      const leaving = new AbortController();
      const response = await fetch(`${server.url}/v1/sessions/${session.id}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
        body: JSON.stringify({ text: "go", waitMs: 60_000 }),
        signal: leaving.signal,
      });
      expect(response.status).toBe(201);
      const sequence = Number(response.headers.get("brain-sequence"));
      // Gone after the headers, before the answer: the turn it started is not the client's to stop.
      leaving.abort();
      release();
      const next = await post(session.id, { text: "again", wait: true });
      expect(next.status).toBe(201);
      const answer = (await next.json()) as { sequence: number; activation: { text: string } | null };
      expect(answer.sequence).toBeGreaterThan(sequence);
      expect(answer.activation?.text).toBe("second");
      const [first] = await server.db.sql<{ text: string }[]>`
        SELECT payload->>'text' AS text FROM journal
        WHERE session_id = ${session.id} AND kind = 'activation_ended' ORDER BY seq LIMIT 1`;
      expect(first!.text).toBe("after the leaver");
    } finally {
      release();
      await client.close();
    }
  });

  it("a post whose answer breaks after its headers: send follows the turn from their sequence, posting once", async () => {
    const { requests, client } = recordingClient({ breakBody: true });
    try {
      const session = await client.sessions.create({ model: scripted({ text: "followed" }) });
      await expect(session.send("hello")).resolves.toBe("followed");
      const path = `/v1/sessions/${session.id}`;
      expect(requests.filter((r) => r === `POST ${path}/messages`)).toHaveLength(1);
      expect(requests.filter((r) => r === `GET ${path}/events`).length).toBeGreaterThanOrEqual(1);
      expect(await userMessages(session.id)).toBe(1);
    } finally {
      await client.close();
    }
  });

  it("refuses a wait outside 1..60000 ms with invalid_request, writing nothing", async () => {
    const client = new Brain({ url: server.url, token: server.token });
    try {
      const session = await client.sessions.create({ model: scripted({ text: "never" }) });
      for (const waitMs of [0, 60_001, 1.5, "10"]) {
        const response = await post(session.id, { text: "hi", waitMs });
        expect(response.status).toBe(400);
        expect(((await response.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
      }
      expect(await userMessages(session.id)).toBe(0);
    } finally {
      await client.close();
    }
  });
});
