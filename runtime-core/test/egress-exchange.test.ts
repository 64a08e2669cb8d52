// The one client for what tenants name (the egress guard's exchange), against a real local server: bounded bodies (per
// status), redirects followed only inside an Environment's base URL, aborts, unreachable hosts.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Egress } from "../src/egress/guard.js";
import { parseEgressAllow } from "../src/egress/rules.js";
import { sendHttpCall } from "../src/environments/http-client.js";
import type { HttpCall } from "../src/environments/http-request.js";

// The server below is on loopback, which the guard opens only where told.
const egress = new Egress({ allow: parseEgressAllow("127.0.0.1") });
const httpExchange: Egress["exchange"] = (url, exchange) => egress.exchange(url, exchange);

let server: Server;
let base: string;
const seen: { method: string; url: string; userAgent: string | undefined; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c;
    });
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", userAgent: req.headers["user-agent"], body });
      const path = req.url ?? "/";
      if (path === "/big") return res.writeHead(200, { "content-type": "text/plain" }).end("x".repeat(100_000));
      if (path === "/error") return res.writeHead(500).end("e".repeat(10_000));
      if (path === "/inside") return res.writeHead(302, { location: "/api/json" }).end();
      if (path === "/api/inside") return res.writeHead(307, { location: "/api/json" }).end();
      if (path === "/api/outside") return res.writeHead(302, { location: "http://example.invalid/x" }).end();
      if (path === "/api/json") {
        return res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ method: req.method, body }));
      }
      if (path === "/hang") return; // never answers
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await egress.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const signal = () => new AbortController().signal;

describe("httpExchange", () => {
  it("keeps at most maxBytes, chosen by the answer's status, and says when there was more", async () => {
    const big = await httpExchange(new URL(`${base}/big`), {
      method: "GET",
      headers: {},
      signal: signal(),
      maxBytes: 1000,
    });
    expect([big.status, big.body.length, big.overflow]).toEqual([200, 1000, true]);
    const error = await httpExchange(new URL(`${base}/error`), {
      method: "GET",
      headers: {},
      signal: signal(),
      maxBytes: (status) => (status === 200 ? 1_000_000 : 10),
    });
    expect([error.status, error.body.toString(), error.overflow]).toEqual([500, "eeeeeeeeee", true]);
  });

  it("never follows a redirect itself, and names itself when the caller does not", async () => {
    const answer = await httpExchange(new URL(`${base}/inside`), {
      method: "GET",
      headers: {},
      signal: signal(),
      maxBytes: 100,
    });
    expect([answer.status, answer.headers.location]).toEqual([302, "/api/json"]);
    expect(seen.at(-1)?.userAgent).toBe("brain");
  });

  it("rejects with the signal's reason when aborted, however long the server would take", async () => {
    const abort = new AbortController();
    const pending = httpExchange(new URL(`${base}/hang`), {
      method: "GET",
      headers: {},
      signal: abort.signal,
      maxBytes: 100,
    });
    abort.abort(new Error("the call ended"));
    await expect(pending).rejects.toThrow();
  });
});

describe("sendHttpCall", () => {
  const call = (path: string, method = "GET", body?: string): HttpCall => ({
    method,
    url: new URL(`${base}${path}`),
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body,
  });

  it("follows a redirect inside the base URL, repeating the request on a 307", async () => {
    const outcome = await sendHttpCall(call("/api/inside", "POST", '{"a":1}'), {
      baseUrl: `${base}/api`,
      signal: signal(),
      egress,
    });
    expect(outcome).toEqual({ status: "ok", value: { method: "POST", body: '{"a":1}' } });
  });

  it("refuses a redirect outside the base URL, so the Environment's headers stay home", async () => {
    const outcome = await sendHttpCall(call("/api/outside"), { baseUrl: `${base}/api`, signal: signal(), egress });
    expect(outcome).toMatchObject({ status: "error", error: { code: "http_error", details: { status: 302 } } });
    expect(seen.some((r) => r.url === "/x")).toBe(false);
  });

  it("answers result_too_large past maxBytes, and http_error with a 2 KB excerpt for an error", async () => {
    expect(await sendHttpCall(call("/big"), { baseUrl: base, signal: signal(), maxBytes: 1000, egress })).toMatchObject(
      {
        status: "error",
        error: { code: "result_too_large", details: { limit: 1000 } },
      },
    );
    const error = await sendHttpCall(call("/error"), { baseUrl: base, signal: signal(), egress });
    expect(error).toMatchObject({ status: "error", error: { code: "http_error", details: { status: 500 } } });
    expect((error as unknown as { error: { details: { body: string } } }).error.details.body).toHaveLength(2048);
  });

  it("names a network failure by its code, and a deadline as a timeout", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const refused = await sendHttpCall(
      { method: "GET", url: new URL(`http://127.0.0.1:${port}/x`), headers: {}, body: undefined },
      { baseUrl: `http://127.0.0.1:${port}`, signal: signal(), egress },
    );
    expect(refused).toMatchObject({
      error: { code: "http_error", message: "GET /x could not be completed: ECONNREFUSED" },
    });
    const timedOut = await sendHttpCall(call("/hang"), { baseUrl: base, signal: AbortSignal.timeout(200), egress });
    expect(timedOut).toMatchObject({ error: { code: "http_error", message: "GET /hang timed out" } });
  });
});
