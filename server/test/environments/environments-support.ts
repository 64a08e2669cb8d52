// What the HTTP Environment tests share (with a server and worker from testkit/brain-with-worker.ts):
// a local node:http server standing in for the GitHub API (it records every request it gets), the
// seed's fetch_issue tool, and readers of the journal and of every table.
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { httpEnv, tool } from "@aexhq/brain";
import type { Sql } from "@aexhq/brain-db/connect";
import { z } from "zod";

export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The raw body text ("" when none). */
  body: string;
}

export interface Answer {
  status?: number;
  json?: unknown;
  text?: string;
  contentType?: string;
}

export interface FakeApi {
  url: string;
  seen: SeenRequest[];
  /** Requests to one path, in order. */
  to(path: string): SeenRequest[];
  close(): Promise<void>;
}

/** A local HTTP API: `route` answers each request (it may wait); every request is recorded first. */
export async function startFakeApi(route: (r: SeenRequest) => Answer | Promise<Answer>): Promise<FakeApi> {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://localhost");
      const request: SeenRequest = {
        method: req.method ?? "",
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      seen.push(request);
      Promise.resolve(route(request))
        .then((answer) => {
          res.statusCode = answer.status ?? 200;
          if (answer.text !== undefined) {
            res.setHeader("content-type", answer.contentType ?? "text/plain");
            res.end(answer.text);
          } else {
            res.setHeader("content-type", answer.contentType ?? "application/json; charset=utf-8");
            res.end(JSON.stringify(answer.json ?? null));
          }
        })
        .catch((error: unknown) => {
          res.statusCode = 599;
          res.end(String(error));
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    to: (path) => seen.filter((r) => r.path === path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The seed's fetchIssue declaration, verbatim (Tool API: "A descriptor the Environment interprets"). */
export const fetchIssue = tool({
  name: "fetch_issue",
  description: "Fetch one issue.",
  input: z.object({ number: z.number().int() }),
  options: z.object({ repository: z.string() }),
  implementation: ({ repository }) => ({
    type: "http_json",
    method: "GET",
    path: `/repos/${repository}/issues/{number}`,
  }),
});

/** A GitHub-like HTTP Environment on the fake API, with a secret Authorization header. */
export function githubEnv(api: FakeApi, extra: Partial<Parameters<typeof httpEnv>[0]> = {}) {
  return httpEnv({
    name: "github",
    baseUrl: api.url,
    headers: { authorization: `Bearer ${SECRET_TOKEN}`, "x-github-api-version": "2022-11-28" },
    ...extra,
  });
}

/** A credential the tests look for everywhere it must not be. */
export const SECRET_TOKEN = "ghp_s3cretTokenValue_0123456789abcdef";

export interface JournalRecord {
  seq: number;
  kind: string;
  payload: {
    call?: number;
    operation?: string;
    name?: string | null;
    value?: unknown;
    outcome?: {
      status: string;
      value?: unknown;
      error?: { code: string; message: string; details?: unknown };
    };
  };
}

export async function journalOf(sql: Sql, sessionId: string): Promise<JournalRecord[]> {
  return sql<JournalRecord[]>`
    SELECT seq, kind, payload FROM brain.journal WHERE session_id = ${sessionId} ORDER BY seq`;
}

/** The terminal outcomes of the session's calls, in call order. */
export async function callOutcomes(sql: Sql, sessionId: string) {
  const journal = await journalOf(sql, sessionId);
  return journal.filter((r) => r.kind === "tool_call_ended").map((r) => r.payload.outcome!);
}
