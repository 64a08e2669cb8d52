// Application tokens in tests: creating them as the operator, and the routes a server registered.
import { type CreatedToken, CreatedTokenSchema, type Session } from "@aexhq/brain-contracts";
import type { Sql } from "@aexhq/brain-db/connect";
import type { FastifyInstance } from "fastify";
import { expect, vi } from "vitest";
import { createSession, request, type Target } from "../../../testkit/api.js";

/** POST /v1/tokens as the operator. */
export async function createAppToken(operator: Target, name: string): Promise<CreatedToken> {
  const answer = await request(operator, "POST", "/v1/tokens", { body: { name } });
  expect(answer.status, answer.text).toBe(201);
  return CreatedTokenSchema.parse(answer.json);
}

/** The same server, with another bearer token. */
export function withToken(target: Target, token: string): Target {
  return { url: target.url, token };
}

/**
 * Every route the app registered, as "METHOD /path", read from printRoutes' tree (children print
 * their path relative to their parent, one level per four characters of indentation).
 */
export function registeredRoutes(app: FastifyInstance): string[] {
  const routes: string[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split("\n")) {
    const m = /^([│├└─\s]*?)([├└]── )(\S+)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = (m[1]!.length + m[2]!.length) / 4 - 1;
    stack.length = depth;
    const path = (stack[depth - 1] ?? "") + m[3]!;
    stack[depth] = path;
    for (const method of m[4]?.split(", ") ?? []) routes.push(`${method} ${path}`);
  }
  return routes.sort();
}

/**
 * A session of `owner` on a host it registered, with one call pending forever (the host never
 * connects): every session route, the call's cancel included, has something to act on.
 */
export async function sessionWithPendingCall(owner: Target, sql: Sql): Promise<{ session: Session; call: number }> {
  const host = await request(owner, "POST", "/v1/hosts", { body: { name: "absent" } });
  expect(host.status, host.text).toBe(201);
  const session = await createSession(owner, {
    model: { provider: "scripted", script: [{ toolCalls: [{ name: "lookup", input: { id: "1" } }] }] },
    hostId: (host.json as { id: string }).id,
    tools: [
      {
        name: "lookup",
        description: "Looks up one record.",
        inputSchema: { type: "object" },
        outputSchema: null,
        env: { type: "host", name: "app" },
      },
    ],
  });
  const sent = await request(owner, "POST", `/v1/sessions/${session.id}/messages`, { body: { text: "go" } });
  expect(sent.status, sent.text).toBe(201);
  const call = await vi.waitFor(
    async () => {
      const [row] = await sql<{ seq: number }[]>`
        SELECT seq::int AS seq FROM calls WHERE session_id = ${session.id} AND state = 'pending'`;
      expect(row).toBeDefined();
      return row!.seq;
    },
    { timeout: 10_000, interval: 20 },
  );
  return { session, call };
}

/** Everything stored about a session, as text: equal before and after means nothing was written. */
export async function sessionSnapshot(sql: Sql, id: string): Promise<string> {
  const [row] = await sql<{ snapshot: string | null }[]>`
    SELECT (SELECT row_to_json(s)::text FROM sessions s WHERE s.id = ${id})
        || (SELECT coalesce(json_agg(r ORDER BY r.seq)::text, '') FROM records r WHERE r.session_id = ${id})
        || (SELECT coalesce(json_agg(c ORDER BY c.seq)::text, '') FROM calls c WHERE c.session_id = ${id})
        AS snapshot`;
  return row?.snapshot ?? "";
}
