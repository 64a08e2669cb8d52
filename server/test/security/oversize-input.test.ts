// Input over the size limits, against a server process logging at `warn`: a body over its route's
// limit is answered 413 `body_too_large` before it is read (never a reset the client sees as
// EPIPE), a host frame over 64 KiB is answered `frame_too_large` before its socket closes, and
// neither is logged as a server error.
import { request as httpRequest } from "node:http";
import { MAX_BODY_BYTES, MAX_FRAME_BYTES } from "@aexhq/brain-contracts";
import { afterAll, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { countRows, createSession, expectError, request } from "../../../testkit/api.js";
import { spawnBrain } from "../../../testkit/brain.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { connectHost, registerHostOn } from "../../../testkit/host-sockets.js";

const brain = startedBeforeAll(() => spawnBrain({ env: { BRAIN_LOG_LEVEL: "warn" } }));
const sockets: WebSocket[] = [];
afterAll(() => {
  for (const ws of sockets) ws.terminate();
});

const TEN_MB = 10 * 1024 * 1024;

/** Lines the server logged at error level or above (pino: 50 and 60). */
function errorLines(): string[] {
  return brain.server
    .output()
    .split("\n")
    .filter((line) => /"level":(50|60)/.test(line));
}

/** A POST with node's own client, which writes the whole body whatever the answer. */
function rawPost(path: string, body: Buffer, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: Record<string, unknown>; text: string }>((resolve, reject) => {
    const url = new URL(path, brain.url);
    const req = httpRequest(url, { method: "POST", headers: { ...headers, "content-length": body.length } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("bodies over the limit", () => {
  it("a 10 MB message is answered 413 body_too_large, by fetch and by node's http client, writing nothing", async () => {
    const session = await createSession(brain);
    const before = await countRows(brain.db.sql);
    const text = "x".repeat(TEN_MB);
    const body = JSON.stringify({ text });
    for (let i = 0; i < 3; i++) {
      const answer = await request(brain, "POST", `/v1/sessions/${session.id}/messages`, {
        raw: body,
        contentType: "application/json",
      });
      expectError(answer, "body_too_large");
      const raw = await rawPost(`/v1/sessions/${session.id}/messages`, Buffer.from(body), {
        authorization: `Bearer ${brain.token}`,
        "content-type": "application/json",
      });
      expect(raw.status).toBe(413);
      expect(JSON.parse(raw.text)).toMatchObject({ error: { code: "body_too_large" } });
    }
    // Without the operator token: authentication answers first, and that answer arrives too.
    const anonymous = await request(brain, "POST", "/v1/sessions", {
      raw: body,
      contentType: "application/json",
      token: null,
    });
    expectError(anonymous, "unauthorized");
    expect(await countRows(brain.db.sql)).toEqual(before);
    // The server is still there, and a body just under the limit is read as usual.
    const under = JSON.stringify({ text: "y".repeat(MAX_BODY_BYTES - 100) });
    expectError(
      await request(brain, "POST", `/v1/sessions/${session.id}/messages`, {
        raw: under,
        contentType: "application/json",
      }),
      "invalid_request",
    );
    expect(errorLines()).toEqual([]);
  });
});

describe("host frames over the limit", () => {
  it("are answered frame_too_large with their id, then the socket closes 1009; logged as a warning", async () => {
    const host = await registerHostOn(brain);
    for (const size of [MAX_FRAME_BYTES + 1, 4 * MAX_FRAME_BYTES]) {
      const socket = await connectHost(brain, host.id, host.token, sockets);
      expect((await socket.next()).type).toBe("welcome");
      const frame = JSON.stringify({ type: "ping", id: 5, pad: "" });
      socket.ws.send(JSON.stringify({ type: "ping", id: 5, pad: "x".repeat(size - frame.length) }));
      const answer = await socket.next();
      expect(answer).toMatchObject({ type: "reject", id: 5, error: { code: "frame_too_large" } });
      if (answer.type === "reject") expect(answer.error.message).toContain(String(size));
      expect(await socket.closed).toEqual({ code: 1009, reason: "frame_too_large" });
    }
    // Larger than any frame the server reads: closed with 1009 by the WebSocket layer itself.
    const socket = await connectHost(brain, host.id, host.token, sockets);
    expect((await socket.next()).type).toBe("welcome");
    socket.ws.send("x".repeat(MAX_BODY_BYTES + 1));
    expect((await socket.closed).code).toBe(1009);
    await brain.server.waitForLine(/a host frame over the size limit/);
    await brain.server.waitForLine(/host socket error/);
    expect(errorLines()).toEqual([]);
  });
});
