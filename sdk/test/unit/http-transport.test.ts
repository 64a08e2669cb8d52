import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { nodeTransport } from "../../src/http-transport.js";
import { ndjsonLines } from "../../src/ndjson.js";

// The SDK's default transport (node:http on keep-alive connections) against a real local server:
// what the SDK relies on from fetch must hold here too.

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer(handler);
  let connections = 0;
  server.on("connection", () => connections++);
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, connections: () => connections };
}

const send = nodeTransport();

describe("nodeTransport", () => {
  it("sends the method, headers and body, reads JSON, and reuses its connection", async () => {
    const seen: string[] = [];
    const server = await serve((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        seen.push(`${req.method} ${req.url} ${req.headers.authorization} ${body}`);
        res.writeHead(201, { "content-type": "application/json", "brain-sequence": "7" });
        res.end(JSON.stringify({ ok: true, body }));
      });
    });
    for (const n of [1, 2, 3]) {
      const answer = await send(`${server.url}/v1/x?n=${n}`, {
        method: "POST",
        headers: { authorization: "Bearer t", "content-type": "application/json" },
        body: JSON.stringify({ n }),
      });
      expect([answer.status, answer.ok, answer.headers.get("Brain-Sequence")]).toEqual([201, true, "7"]);
      expect(await answer.json()).toEqual({ ok: true, body: JSON.stringify({ n }) });
    }
    expect(seen).toEqual([1, 2, 3].map((n) => `POST /v1/x?n=${n} Bearer t {"n":${n}}`));
    expect(server.connections()).toBe(1);
  });

  it("passes failure statuses through with their body", async () => {
    const server = await serve((_req, res) => {
      res.writeHead(404, { "content-type": "application/json" });
      res.end('{"error":{"code":"not_found"}}');
    });
    const answer = await send(`${server.url}/`, { method: "GET", headers: {} });
    expect([answer.status, answer.ok]).toEqual([404, false]);
    expect(await answer.text()).toBe('{"error":{"code":"not_found"}}');
  });

  it("a body cut after the headers rejects its read, and the headers stay readable", async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "brain-sequence": "12", "content-length": "100" });
      res.write('{"sequence":');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const answer = await send(`${server.url}/`, { method: "POST", headers: {}, body: "{}" });
    expect(answer.headers.get("brain-sequence")).toBe("12");
    await expect(answer.json()).rejects.toThrow();
  });

  it("an abort rejects with the signal's reason, before or after the headers", async () => {
    const server = await serve((req, res) => {
      if (req.url === "/headers") res.writeHead(200).write("partial");
      // otherwise: never answers
    });
    const before = new AbortController();
    const pending = send(`${server.url}/silent`, { method: "GET", headers: {}, signal: before.signal });
    before.abort(new Error("stop waiting"));
    await expect(pending).rejects.toThrow("stop waiting");

    const after = new AbortController();
    const answer = await send(`${server.url}/headers`, { method: "GET", headers: {}, signal: after.signal });
    const reading = answer.text();
    after.abort(new Error("stop reading"));
    await expect(reading).rejects.toThrow("stop reading");
  });

  it("streams a body as it arrives", async () => {
    let finish!: () => void;
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      res.write('{"a":1}\n');
      finish = () => res.end('{"b":2}\n');
    });
    const answer = await send(`${server.url}/events`, { method: "GET", headers: {} });
    const lines: string[] = [];
    for await (const line of ndjsonLines(answer.body!)) {
      lines.push(line);
      if (lines.length === 1) finish();
    }
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
  });
});
