// A real local HTTP API for tests (node:http on 127.0.0.1): answers JSON from a handler and records
// every request, standing in for a third-party API an HTTP Environment calls.
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface JsonRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, the raw text if it was not JSON, or undefined when empty. */
  body: unknown;
}

export interface JsonAnswer {
  status?: number;
  body?: unknown;
  /** Sent as is instead of JSON. */
  text?: string;
}

export interface JsonServer {
  url: string;
  requests: JsonRequest[];
  close(): Promise<void>;
}

export async function startJsonServer(
  handle: (request: JsonRequest) => JsonAnswer | Promise<JsonAnswer>,
): Promise<JsonServer> {
  const requests: JsonRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let body: unknown;
      if (text.length > 0) {
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
      }
      const url = new URL(req.url ?? "/", "http://localhost");
      const request = {
        method: req.method ?? "",
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body,
      };
      requests.push(request);
      try {
        const answer = await handle(request);
        res.statusCode = answer.status ?? 200;
        if (answer.text !== undefined) {
          res.end(answer.text);
        } else {
          res.setHeader("content-type", "application/json");
          res.end(JSON.stringify(answer.body ?? null));
        }
      } catch (error) {
        res.statusCode = 500;
        res.end(String(error));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
