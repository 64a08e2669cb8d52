// The chat example's server: builds the page (Vite), serves it, and passes the session routes the
// page uses on to Brain with the token added, so the browser never holds one. `/new` creates a
// session and opens its chat. main.mjs runs it.

import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { extname, join } from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));

/** The routes the page calls, and nothing else of Brain's API. */
const PASSED = /^\/v1\/sessions\/[0-9a-f-]{36}\/(events|chat|chat\/stream)$/;
const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css" };

/** Builds the page into `outDir` (Vite bundles React, the AI SDK and app.js). */
export async function buildChatApp(outDir) {
  const { build } = await import("vite");
  await build({ root: here, logLevel: "error", build: { outDir, emptyOutDir: true } });
}

/** Serves the built page at `dist` and the session routes of the Brain at `brain`. */
export async function startChatApp({ brain, model, dist, port = 0, host = "127.0.0.1" }) {
  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`Brain could not be reached: ${err.message}`);
    });
  });
  async function handle(req, res) {
    const url = new URL(req.url ?? "/", "http://app");
    if (url.pathname === "/new") return created(res, await createSession(brain, model));
    if (PASSED.test(url.pathname)) return pass(req, res, brain, `${url.pathname}${url.search}`);
    const file = url.pathname === "/" ? "index.html" : url.pathname.slice(1);
    if (file.includes("..")) return res.writeHead(404).end();
    const body = await readFile(join(dist, file)).catch(() => null);
    if (body === null) return res.writeHead(404).end();
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" }).end(body);
  }
  await new Promise((resolve) => server.listen(port, host, resolve));
  const { port: bound } = server.address();
  return {
    url: `http://${host}:${bound}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

async function createSession(brain, model) {
  const res = await fetch(`${brain.url}/v1/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${brain.token}`, "content-type": "application/json" },
    body: JSON.stringify({ model }),
  });
  if (!res.ok) throw new Error(`creating a session answered ${res.status}: ${await res.text()}`);
  return (await res.json()).id;
}

function created(res, sessionId) {
  res.writeHead(302, { location: `/?session=${sessionId}` }).end();
}

/** One request on to Brain, its answer streamed back as it comes; a client that leaves stops it. */
async function pass(req, res, brain, path) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const abort = new AbortController();
  res.on("close", () => abort.abort());
  const upstream = await fetch(`${brain.url}${path}`, {
    method: req.method,
    headers: { authorization: `Bearer ${brain.token}`, "content-type": "application/json" },
    body: req.method === "GET" || req.method === "HEAD" ? undefined : Buffer.concat(chunks),
    signal: abort.signal,
  });
  const headers = {};
  for (const name of ["content-type", "cache-control", "x-vercel-ai-ui-message-stream"]) {
    const value = upstream.headers.get(name);
    if (value) headers[name] = value;
  }
  res.writeHead(upstream.status, headers);
  if (!upstream.body) return res.end();
  Readable.fromWeb(upstream.body)
    .on("error", () => res.destroy())
    .pipe(res);
}
