// OpenTelemetry traces built from the journal: two real server processes on one database export
// to an OTLP receiver started here; the exporting server is SIGKILLed mid-turn (the session's own
// server, too) and the other one carries on. The trace stays whole: one trace per activation,
// a tool's own model call under its execute_tool span, nothing lost, duplicates identical.
import { Brain, tool } from "@aexhq/brain";
import { parseConfig } from "@aexhq/brain-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { postMessage } from "../../../testkit/api.js";
import { startBrain } from "../../../testkit/brain.js";
import { createTestDatabase, type TestDatabase } from "../../../testkit/database.js";
import { type ServerProcess, spawnServer } from "../../../testkit/server-process.js";
import { deferred, serverTicks, until } from "../../../testkit/wait.js";
import { type OtlpReceiver, type ReceivedSpan, spanIdOf, startOtlpReceiver, traceIdOf } from "./otlp-receiver.js";

let db: TestDatabase;
let receiver: OtlpReceiver;
const token = `traces-${Date.now()}-token`;
const servers: ServerProcess[] = [];
const clients: Brain[] = [];

/** No OTEL_* variable of the test's own environment reaches a spawned server. */
const NO_OTEL = Object.fromEntries(
  Object.keys(process.env)
    .filter((k) => k.startsWith("OTEL_"))
    .map((k) => [k, undefined]),
);

async function server(env: Record<string, string | undefined>): Promise<ServerProcess & { id: string }> {
  const s = await spawnServer({ databaseUrl: db.url, token, env: { BRAIN_LOG_LEVEL: "warn", ...NO_OTEL, ...env } });
  servers.push(s);
  const { serverId } = (await (await fetch(`${s.url}/healthz`)).json()) as { serverId: string };
  return Object.assign(s, { id: serverId });
}

async function api<T>(base: string, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** The server whose trace lane holds the export lease on this database, if any. */
async function exporter(sql: TestDatabase["sql"], database: string): Promise<string | undefined> {
  const rows = await sql<{ app: string }[]>`
    SELECT a.application_name AS app FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.locktype = 'advisory' AND l.granted AND a.datname = ${database}
      AND a.application_name LIKE 'brain-traces:%'`;
  return rows[0]?.app.slice("brain-traces:".length);
}

const slow = <T>(what: string, probe: () => Promise<T | undefined | null | false>) => until(what, probe, 45_000);

beforeAll(async () => {
  db = await createTestDatabase();
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  for (const s of servers) await s.kill().catch(() => {});
  await receiver?.close();
  await db?.drop();
});

describe("traces from the journal", () => {
  it("one trace per activation, a tool's model call under its execute_tool span, whole across a SIGKILL of the exporter", async () => {
    const otlp = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" };
    const a = await server(otlp);
    expect(a.output()).toContain(`Traces: OTLP http/json to ${receiver.url}/v1/traces`);
    await slow("server A to take the export lease", async () => (await exporter(db.sql, db.name)) === a.id);
    const b = await server(otlp);

    const gate = deferred();
    const reached = deferred();
    const summarize = tool({
      name: "summarize",
      description: "Summarises with a model call of its own, then waits.",
      input: z.object({}),
      run: async (_input, ctx) => {
        const result = await ctx.model({ messages: [{ role: "user", content: "Summarise: a long text" }] });
        await ctx.emit("progress", { step: "summarised" });
        reached.resolve();
        await gate.promise;
        return ctx.finish({ summary: result.text });
      },
    });
    // The host is on B; the session is created through A, whose Agentloop runs it.
    const host = new Brain({ url: b.url, token });
    clients.push(host);
    await host.sessions.create({ model: { provider: "scripted", script: [{ text: "x" }] }, tools: [summarize()] });
    const placed = summarize();
    const created = await api<{ id: string }>(a.url, "/v1/sessions", {
      model: {
        provider: "scripted",
        script: [{ toolCalls: [{ name: "summarize", input: {} }] }, { text: "turn one" }, { text: "turn two" }],
        toolScript: [{ text: "a summary" }],
      },
      tools: [placed.placement],
      hostId: host.credentials()!.hostId,
    });
    const sessionId = created.id;
    await host.sessions.get(sessionId, { tools: [placed] });
    await postMessage(a, sessionId, "go");
    await reached.promise;
    const ours = () => receiver.spans().filter((s) => s.attributes["gen_ai.conversation.id"] === sessionId);
    // A has exported the spans that ended so far: the loop's first model call and the tool's.
    await slow("the first chat spans from A", async () => ours().filter((s) => s.name.startsWith("chat")).length >= 2);

    const killedAt = Date.now();
    await a.kill("SIGKILL");
    gate.resolve();
    await slow("B to take the export lease", async () => (await exporter(db.sql, db.name)) === b.id);
    await slow("turn one to end on B", async () => {
      const [row] = await db.sql`
        SELECT 1 FROM journal WHERE session_id = ${sessionId} AND kind = 'activation_ended'`;
      return row;
    });
    const second = await api<{ activation: { text: string } }>(b.url, `/v1/sessions/${sessionId}/messages`, {
      text: "again",
      wait: true,
    });
    expect(second.activation.text).toBe("turn two");

    // Every span the journal holds (a start with its end) arrives, ids derived from (session, seq).
    const journal = await db.sql<{ seq: number; kind: string; payload: Record<string, unknown> }[]>`
      SELECT seq, kind, payload FROM journal WHERE session_id = ${sessionId} ORDER BY seq`;
    const ends = journal.filter((r) => ["activation_ended", "model_call_ended", "tool_call_ended"].includes(r.kind));
    const startOf = (r: (typeof journal)[number]) =>
      Number(r.kind === "activation_ended" ? r.payload.activation : r.payload.call);
    const expected = new Set(ends.map((r) => spanIdOf(sessionId, startOf(r))));
    expect(expected.size).toBe(7); // 2 invoke_agent, 3 loop chats + 1 tool chat, 1 execute_tool
    await slow("every span", async () => [...expected].every((id) => ours().some((s) => s.spanId === id)));

    const byId = new Map<string, ReceivedSpan>();
    for (const s of ours()) {
      const seen = byId.get(s.spanId);
      // Exported twice (a batch whose cursor the killed server had not advanced): the same span.
      if (seen) expect(s).toEqual(seen);
      byId.set(s.spanId, s);
    }
    expect(new Set(byId.keys())).toEqual(expected);

    const [act1, act2] = journal.filter((r) => r.kind === "activation_started");
    const call = journal.find((r) => r.kind === "tool_call_started")!;
    const span = (seq: number) => byId.get(spanIdOf(sessionId, seq))!;
    const agent1 = span(act1!.seq);
    expect(agent1).toMatchObject({
      traceId: traceIdOf(sessionId, act1!.seq),
      parentSpanId: undefined,
      name: "invoke_agent",
      attributes: {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.conversation.id": sessionId,
        "gen_ai.provider.name": "scripted",
        "brain.activation.status": "completed",
      },
    });
    // Started on A, ended on B after the kill: one span all the same.
    expect(Number(BigInt(agent1.startTimeUnixNano) / 1_000_000n)).toBeLessThan(killedAt);
    expect(Number(BigInt(agent1.endTimeUnixNano) / 1_000_000n)).toBeGreaterThan(killedAt);

    const tool1 = span(call.seq);
    expect(tool1).toMatchObject({
      traceId: agent1.traceId,
      parentSpanId: agent1.spanId,
      name: "execute_tool summarize",
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "summarize",
        "gen_ai.tool.call.id": call.payload.callId,
        "gen_ai.conversation.id": sessionId,
        "brain.tool_call.status": "ok",
      },
    });
    expect(tool1.events.map((e) => e.name)).toEqual(expect.arrayContaining(["progress", "tool_result"]));

    const chats = journal.filter((r) => r.kind === "model_call_started");
    const toolChat = chats.find((r) => (r.payload.origin as { type: string }).type === "tool")!;
    expect(span(toolChat.seq)).toMatchObject({
      traceId: agent1.traceId,
      parentSpanId: tool1.spanId, // the tool's own model call is the tool's child
      name: "chat scripted",
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.response.model": "scripted",
        "gen_ai.usage.input_tokens": 0,
        "gen_ai.usage.output_tokens": 0,
        "brain.model_call.origin": "tool",
      },
    });
    for (const c of chats.filter((r) => r !== toolChat)) {
      const activation = Number(c.payload.activation);
      expect(span(c.seq)).toMatchObject({
        traceId: traceIdOf(sessionId, activation),
        parentSpanId: spanIdOf(sessionId, activation),
        attributes: { "gen_ai.operation.name": "chat", "brain.model_call.origin": "agentloop" },
      });
    }
    // The second turn is a trace of its own, in the same conversation.
    expect(span(act2!.seq)).toMatchObject({ traceId: traceIdOf(sessionId, act2!.seq), parentSpanId: undefined });
    expect(span(act2!.seq).traceId).not.toBe(agent1.traceId);

    // B exported what ended after the kill.
    const after = receiver.requests.filter((r) => r.at > killedAt).flatMap((r) => r.spans);
    expect(after.some((s) => s.spanId === tool1.spanId)).toBe(true);
    // The cursor reaches the end of the journal once the endpoint has acknowledged.
    await slow("the cursor at the journal's end", async () => {
      const [cursor] = await db.sql`SELECT exported_seq FROM trace_cursors WHERE session_id = ${sessionId}`;
      return cursor?.exported_seq === journal.at(-1)!.seq;
    });
  }, 180_000);

  it("off when no endpoint is configured: no exporter connection, no cursor, nothing sent", async () => {
    const before = receiver.requests.length;
    const brain = await startBrain();
    const client = new Brain({ url: brain.url, token: brain.token });
    try {
      const s = await client.sessions.create({ model: { provider: "scripted", script: [{ text: "hi" }] }, tools: [] });
      await expect(s.send("hello")).resolves.toBe("hi");
      const { serverId } = (await (await fetch(`${brain.url}/healthz`)).json()) as { serverId: string };
      await serverTicks(brain.db.sql, serverId, 2);
      const lanes = await brain.db.sql`
        SELECT 1 FROM pg_stat_activity WHERE datname = ${brain.db.name} AND application_name LIKE 'brain-traces:%'`;
      expect(lanes).toHaveLength(0);
      expect(await brain.db.sql`SELECT * FROM trace_cursors`).toHaveLength(0);
      expect(receiver.requests.length).toBe(before);
    } finally {
      await client.close();
      await brain.close();
    }
  }, 90_000);

  it("reads the standard OTEL_EXPORTER_OTLP_* variables, and refuses what it cannot do", () => {
    const base = { BRAIN_SECRET_KEY: "a".repeat(64) };
    expect(parseConfig(base).traces).toBeNull();
    expect(
      parseConfig({
        ...base,
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/",
        OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=s%20ecret,other=1",
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: "other=2",
        OTEL_SERVICE_NAME: "brain-eu",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=prod,service.name=ignored",
      }).traces,
    ).toEqual({
      url: "http://collector:4318/v1/traces",
      headers: { "x-api-key": "s ecret", other: "2" },
      protocol: "http/protobuf",
      timeoutMs: 10_000,
      resource: { "deployment.environment.name": "prod", "service.name": "brain-eu" },
    });
    const traces = { ...base, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/custom" };
    expect(parseConfig(traces).traces?.url).toBe("http://collector:4318/custom");
    expect(parseConfig({ ...traces, OTEL_TRACES_EXPORTER: "none" }).traces).toBeNull();
    expect(() => parseConfig({ ...traces, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toThrow(
      /OTEL_EXPORTER_OTLP_PROTOCOL/,
    );
    expect(() => parseConfig({ ...traces, OTEL_EXPORTER_OTLP_HEADERS: "no-equals-sign" })).toThrow(
      /OTEL_EXPORTER_OTLP_HEADERS/,
    );
  });
});
