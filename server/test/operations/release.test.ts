// Ending or deleting a session tells its host to release the session's handlers, whichever server
// the request reached and whichever server holds the host's connection: the release travels in
// the commit's keys (NOTIFY), and only the session's own host is told. Two servers, one database,
// a raw host socket.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { createSession, hostTool, request } from "../../../testkit/api.js";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { connectHost, registerHostOn } from "../../../testkit/host-sockets.js";

let a: InProcessBrain;
let b: InProcessBrain;
const sockets: WebSocket[] = [];

beforeAll(async () => {
  a = await startBrain();
  b = await startBrain({ db: a.db });
});
afterAll(async () => {
  for (const ws of sockets) ws.terminate();
  await b?.close();
  await a?.close();
});

describe("release", () => {
  it("reaches the host on another server when a session is ended or deleted, and no other host", async () => {
    const host = await registerHostOn(a);
    const other = await registerHostOn(a);
    const socket = await connectHost(a, host.id, host.token, sockets);
    expect(await socket.next()).toMatchObject({ type: "welcome", hostId: host.id });
    const otherSocket = await connectHost(a, other.id, other.token, sockets);
    expect(await otherSocket.next()).toMatchObject({ type: "welcome", hostId: other.id });

    const ended = await createSession(a, { hostId: host.id, tools: [hostTool("t")] });
    const deleted = await createSession(a, { hostId: host.id, tools: [hostTool("t")] });
    const foreign = await createSession(a, { hostId: other.id, tools: [hostTool("t")] });

    // Through the other server: the one holding the socket learns it from the commit's NOTIFY.
    expect((await request(b, "POST", `/v1/sessions/${foreign.id}/end`)).status).toBe(200);
    expect((await request(b, "POST", `/v1/sessions/${ended.id}/end`)).status).toBe(200);
    expect(await socket.next()).toEqual({ type: "release", sessionId: ended.id });
    expect((await request(b, "DELETE", `/v1/sessions/${deleted.id}`)).status).toBe(204);
    expect(await socket.next()).toEqual({ type: "release", sessionId: deleted.id });
    // The other host heard of its own session only.
    expect(await otherSocket.next()).toEqual({ type: "release", sessionId: foreign.id });

    // Ending twice releases once: the second request changes nothing.
    expect((await request(b, "POST", `/v1/sessions/${ended.id}/end`)).status).toBe(200);
    const again = await createSession(a, { hostId: host.id, tools: [hostTool("t")] });
    expect((await request(a, "POST", `/v1/sessions/${again.id}/end`)).status).toBe(200);
    expect(await socket.next()).toEqual({ type: "release", sessionId: again.id });
  });
});
