// Finding 7 of the tenant review: revoking a token left its open host sockets and event streams
// running (a revoked token's host socket was still open 10 s later). Two servers share a database
// here; the token is revoked on one, and what it opened on the other closes within a heartbeat or
// two: its host socket (close code 4401) and its event stream. The operator's stay open.
import { describe, expect, it } from "vitest";
import { createSession, request, type Target } from "../../../testkit/api.js";
import { startBrain } from "../../../testkit/brain.js";
import { createTestDatabase } from "../../../testkit/database.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { connectHost, registerHostOn, socketsClosedAfterAll } from "../../../testkit/host-sockets.js";
import { within } from "../../../testkit/wait.js";
import { createAppToken, withToken } from "./app-tokens-support.js";

const db = startedBeforeAll(() => createTestDatabase({ max: 30 }), { stop: (d) => d.drop() });
const revoking = startedBeforeAll(() => startBrain({ db }));
const holding = startedBeforeAll(() => startBrain({ db }));
const sockets = socketsClosedAfterAll();

/** Follows a session's events; settles when the server ends the stream. */
async function follow(target: Target, sessionId: string): Promise<{ ended: Promise<void> }> {
  const res = await fetch(`${target.url}/v1/sessions/${sessionId}/events?follow=true`, {
    headers: { authorization: `Bearer ${target.token}` },
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const ended = (async () => {
    for (;;) {
      const { done } = await reader.read().catch(() => ({ done: true }));
      if (done) return;
    }
  })();
  return { ended };
}

describe("revoking an application token", () => {
  it("closes its host sockets and event streams on every server, and leaves the operator's alone", async () => {
    const token = await createAppToken(revoking, "tenant");
    const app = withToken(holding, token.token);
    const host = await registerHostOn(app);
    const socket = await connectHost(holding, host.id, host.token, sockets);
    expect((await socket.next()).type).toBe("welcome");
    const session = await createSession(app);
    const stream = await follow(app, session.id);

    const operatorHost = await registerHostOn(holding);
    const operatorSocket = await connectHost(holding, operatorHost.id, operatorHost.token, sockets);
    expect((await operatorSocket.next()).type).toBe("welcome");
    const operatorStream = await follow(holding, (await createSession(holding)).id);
    let operatorStreamEnded = false;
    void operatorStream.ended.then(() => {
      operatorStreamEnded = true;
    });

    expect((await request(revoking, "DELETE", `/v1/tokens/${token.id}`)).status).toBe(200);
    expect(await within(socket.closed, "the revoked token's host socket to close")).toEqual({
      code: 4401,
      reason: "token revoked",
    });
    await within(stream.ended, "the revoked token's event stream to end");
    // A new connection is refused outright.
    await expect(connectHost(holding, host.id, host.token, sockets)).rejects.toThrow();
    // The operator's socket and stream are untouched.
    operatorSocket.ws.send(JSON.stringify({ type: "ping", id: 1 }));
    expect(await operatorSocket.next()).toEqual({ type: "pong", id: 1 });
    expect(operatorStreamEnded).toBe(false);
  });
});
