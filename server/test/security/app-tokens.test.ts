// Application tokens: created, listed and revoked by the operator; stored as hashes only; a
// revoked token is refused at once by every server sharing the database.
import { APP_TOKEN_PREFIX, AppTokenListSchema, AppTokenSchema } from "@aexhq/brain-contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { createSession, dumpSchemas, expectError, request, sha256 } from "../../../testkit/api.js";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { connectHost, Refused, registerHostOn } from "../../../testkit/host-sockets.js";
import { createAppToken, withToken } from "./app-tokens-support.js";

let brain: InProcessBrain;
let peer: InProcessBrain;
const sockets: WebSocket[] = [];

beforeAll(async () => {
  brain = await startBrain();
  // A second server on the same database, with its own operator token.
  peer = await startBrain({ db: brain.db });
});
afterAll(async () => {
  for (const ws of sockets) ws.terminate();
  await peer?.close();
  await brain?.close();
});

const tokenCount = async () => (await brain.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM app_tokens`)[0]!.n;

describe("administration by the operator", () => {
  it("creates a token shown once, with the brain_app_ prefix; lists it without the token", async () => {
    const created = await createAppToken(brain, "billing");
    expect(created.token.startsWith(APP_TOKEN_PREFIX)).toBe(true);
    expect(created.token.length).toBeGreaterThan(APP_TOKEN_PREFIX.length + 40);
    expect(created).toMatchObject({ name: "billing", revokedAt: null });
    const list = await request(brain, "GET", "/v1/tokens");
    expect(list.status).toBe(200);
    const listed = AppTokenListSchema.parse(list.json).tokens.find((t) => t.id === created.id);
    expect(listed).toEqual({
      id: created.id,
      name: "billing",
      createdAt: created.createdAt,
      revokedAt: null,
      quotas: { sessions: null, hosts: null, openCalls: null, componentBytes: null },
    });
    expect(list.text).not.toContain(created.token);
    // Two tokens with one name are two tokens.
    const again = await createAppToken(brain, "billing");
    expect(again.id).not.toBe(created.id);
    expect(again.token).not.toBe(created.token);
  });

  it("stores only the SHA-256: the token appears nowhere in the database", async () => {
    const created = await createAppToken(brain, "hashed");
    const app = withToken(brain, created.token);
    // Use it, so anything a request might store (sessions, hosts, idempotency keys) exists.
    await createSession(app);
    await registerHostOn(app);
    await request(app, "POST", "/v1/sessions", {
      body: { model: { provider: "scripted", script: [] } },
      headers: { "idempotency-key": created.token },
    });
    const dump = await dumpSchemas(brain.db.sql, ["brain", "brain_boss"]);
    const secret = created.token.slice(APP_TOKEN_PREFIX.length);
    expect(dump).not.toContain(secret);
    expect(dump).not.toContain(Buffer.from(created.token).toString("hex"));
    expect(dump).not.toContain(Buffer.from(created.token).toString("base64"));
    const [row] = await brain.db.sql<
      { token_hash: Buffer }[]
    >`SELECT token_hash FROM app_tokens WHERE id = ${created.id}`;
    expect(row?.token_hash.equals(sha256(created.token))).toBe(true);
  });

  it("refuses hostile bodies and ids with documented codes, storing nothing", async () => {
    const before = await tokenCount();
    const bodies: unknown[] = [
      {},
      { name: "" },
      { name: "x".repeat(129) },
      { name: 42 },
      { name: "nul\u0000" },
      { name: "ok", token: "brain_app_chosen-by-the-caller" },
      [],
      null,
    ];
    for (const body of bodies) expectError(await request(brain, "POST", "/v1/tokens", { body }), "invalid_request");
    expectError(
      await request(brain, "POST", "/v1/tokens", { raw: "name=x", contentType: "text/plain" }),
      "unsupported_media_type",
    );
    expectError(
      await request(brain, "POST", "/v1/tokens", { raw: "{", contentType: "application/json" }),
      "invalid_request",
    );
    expect(await tokenCount()).toBe(before);
    expectError(await request(brain, "DELETE", "/v1/tokens/not-a-uuid"), "invalid_request");
    expectError(await request(brain, "DELETE", "/v1/tokens/00000000-0000-4000-8000-000000000000"), "not_found");
  });
});

describe("revocation", () => {
  it("refuses a revoked token at once, on every server, and keeps what it created for the operator", async () => {
    const created = await createAppToken(brain, "to revoke");
    const here = withToken(brain, created.token);
    const there = withToken(peer, created.token);
    const session = await createSession(here);
    expect((await request(there, "GET", `/v1/sessions/${session.id}`)).status).toBe(200);

    const revoked = await request(brain, "DELETE", `/v1/tokens/${created.id}`);
    expect(revoked.status).toBe(200);
    const view = AppTokenSchema.parse(revoked.json);
    expect(view.revokedAt).not.toBeNull();

    // The next request, on either server, is unauthorized: no cache to wait for.
    for (const target of [here, there]) {
      expectError(await request(target, "GET", `/v1/sessions/${session.id}`), "unauthorized");
      expectError(await request(target, "GET", "/v1/sessions"), "unauthorized");
      expectError(
        await request(target, "POST", "/v1/sessions", { body: { model: { provider: "scripted", script: [] } } }),
        "unauthorized",
      );
    }
    // Revoking again is a no-op that keeps the first time; the list shows it revoked.
    const twice = AppTokenSchema.parse((await request(peer, "DELETE", `/v1/tokens/${created.id}`)).json);
    expect(twice.revokedAt).toBe(view.revokedAt);
    const listed = AppTokenListSchema.parse((await request(brain, "GET", "/v1/tokens")).json).tokens;
    expect(listed.find((t) => t.id === created.id)?.revokedAt).toBe(view.revokedAt);
    // The operator still sees and manages the session.
    expect((await request(brain, "GET", `/v1/sessions/${session.id}`)).status).toBe(200);
    expect((await request(brain, "DELETE", `/v1/sessions/${session.id}`)).status).toBe(204);
  });

  it("a revoked application's hosts cannot connect any more; other hosts can", async () => {
    const created = await createAppToken(brain, "host owner");
    const app = withToken(brain, created.token);
    const host = await registerHostOn(app);
    const live = await connectHost(brain, host.id, host.token, sockets);
    live.ws.close();
    await live.closed;
    expect((await request(brain, "DELETE", `/v1/tokens/${created.id}`)).status).toBe(200);
    for (const target of [brain, peer]) {
      const refused = await connectHost(target, host.id, host.token, sockets).then(
        () => null,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(Refused);
      expect((refused as Refused).status).toBe(401);
    }
    const operatorHost = await registerHostOn(brain);
    const ok = await connectHost(peer, operatorHost.id, operatorHost.token, sockets);
    ok.ws.close();
  });

  it("refuses tokens that only look like application tokens", async () => {
    const created = await createAppToken(brain, "real");
    const forged = [
      `${APP_TOKEN_PREFIX}${"A".repeat(43)}`,
      created.token.slice(0, -1),
      `${created.token}x`,
      created.token.slice(APP_TOKEN_PREFIX.length),
      created.id,
    ];
    for (const token of forged) {
      expectError(await request(withToken(brain, token), "GET", "/v1/sessions"), "unauthorized");
    }
    expect((await request(withToken(brain, created.token), "GET", "/v1/sessions")).status).toBe(200);
  });
});
