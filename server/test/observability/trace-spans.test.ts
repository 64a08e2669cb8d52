// Spans built from the journal, one server in the test process exporting to an OTLP receiver
// started here: failures as error spans, links from an activation woken by background results, a
// session ended mid-turn, an endpoint that fails or refuses, and protobuf, the default protocol.
import { Brain, tool } from "@aexhq/brain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { postMessage } from "../../../testkit/api.js";
import { startBrain } from "../../../testkit/brain.js";
import { deferred, until } from "../../../testkit/wait.js";
import { type OtlpReceiver, spanIdOf, startOtlpReceiver, traceIdOf } from "./otlp-receiver.js";

let receiver: OtlpReceiver;
const slow = <T>(what: string, probe: () => Promise<T | undefined | null | false>) => until(what, probe, 45_000);

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

describe("spans from the journal", () => {
  it("a failed tool call is an error span; an activation woken by a background result links to that call", async () => {
    const brain = await startBrain({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" },
    });
    const client = new Brain({ url: brain.url, token: brain.token });
    try {
      const later = deferred();
      const background = tool({
        name: "background",
        description: "Returns at once, finishes later.",
        input: z.object({}),
        run: async (_input, ctx) => {
          void later.promise.then(() => ctx.finish({ done: true }));
          return { started: true };
        },
      });
      const boom = tool({
        name: "boom",
        description: "Throws.",
        input: z.object({}),
        run: async () => {
          throw new Error("boom");
        },
      });
      const s = await client.sessions.create({
        model: {
          provider: "scripted",
          script: [
            {
              toolCalls: [
                { name: "background", input: {} },
                { name: "boom", input: {} },
              ],
            },
            { text: "first" },
            { text: "second" },
          ],
        },
        tools: [background(), boom()],
      });
      await expect(s.send("go")).resolves.toBe("first");
      later.resolve();
      const journal = await until("the activation the background result woke to end", async () => {
        const rows = await brain.db.sql<{ seq: number; kind: string; payload: Record<string, unknown> }[]>`
          SELECT seq, kind, payload FROM journal WHERE session_id = ${s.id} ORDER BY seq`;
        return rows.filter((r) => r.kind === "activation_ended").length === 2 && rows;
      });
      const [act1, act2] = journal.filter((r) => r.kind === "activation_started");
      expect(act2!.payload.cause).toBe("observations");
      const callOf = (name: string) => journal.find((r) => r.kind === "tool_call_started" && r.payload.tool === name)!;
      const spanOf = (seq: number) =>
        slow(`span ${seq}`, async () => receiver.spans().find((x) => x.spanId === spanIdOf(s.id, seq)));

      expect(await spanOf(callOf("boom").seq)).toMatchObject({
        traceId: traceIdOf(s.id, act1!.seq),
        status: { code: 2, message: "tool_error" },
        attributes: { "gen_ai.tool.name": "boom", "error.type": "tool_error", "brain.tool_call.status": "error" },
      });
      const woken = await spanOf(act2!.seq);
      expect(woken.traceId).toBe(traceIdOf(s.id, act2!.seq));
      expect(woken.attributes["brain.activation.cause"]).toBe("observations");
      expect(woken.links).toEqual([
        {
          traceId: traceIdOf(s.id, act1!.seq),
          spanId: spanIdOf(s.id, callOf("background").seq),
          attributes: { "brain.link": "observation" },
        },
      ]);
      // The background call's span is in the trace of the activation that made it, ended later.
      const call = await spanOf(callOf("background").seq);
      expect(call).toMatchObject({ traceId: traceIdOf(s.id, act1!.seq), parentSpanId: spanIdOf(s.id, act1!.seq) });
      expect(call.events.map((e) => e.name)).toEqual(["tool_result", "tool_returned", "tool_result"]);
    } finally {
      await client.close();
      await brain.close();
    }
  }, 90_000);

  it("a session ended mid-turn closes the spans it left open: the activation's, under which its calls were exported", async () => {
    const brain = await startBrain({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" },
    });
    const client = new Brain({ url: brain.url, token: brain.token });
    try {
      const started = deferred();
      const wait = tool({
        name: "wait",
        description: "Waits until its call ends.",
        input: z.object({}),
        run: async (_input, ctx) => {
          started.resolve();
          await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
        },
      });
      const s = await client.sessions.create({
        model: { provider: "scripted", script: [{ toolCalls: [{ name: "wait", input: {} }] }, { text: "never" }] },
        tools: [wait()],
      });
      await postMessage(brain, s.id, "go");
      await started.promise;
      await s.end();
      const journal = await brain.db.sql<{ seq: number; kind: string }[]>`
        SELECT seq, kind FROM journal WHERE session_id = ${s.id} ORDER BY seq`;
      expect(journal.map((r) => r.kind)).not.toContain("activation_ended");
      const act = journal.find((r) => r.kind === "activation_started")!;
      const call = journal.find((r) => r.kind === "tool_call_started")!;
      const agent = await slow("the activation's span", async () =>
        receiver.spans().find((x) => x.spanId === spanIdOf(s.id, act.seq)),
      );
      expect(agent).toMatchObject({
        traceId: traceIdOf(s.id, act.seq),
        name: "invoke_agent",
        status: { code: 2, message: "session_ended" },
        attributes: { "error.type": "session_ended", "brain.activation.status": "session_ended" },
      });
      const ended = journal.find((r) => r.kind === "session_ended")!;
      const [at] = await brain.db.sql<{ micros: string }[]>`
        SELECT (extract(epoch FROM created_at) * 1000000)::bigint::text AS micros
        FROM records WHERE session_id = ${s.id} AND seq = ${ended.seq}`;
      expect(agent.endTimeUnixNano).toBe(`${at!.micros}000`);
      const callSpan = await slow("the call's span", async () =>
        receiver.spans().find((x) => x.spanId === spanIdOf(s.id, call.seq)),
      );
      expect(callSpan).toMatchObject({
        parentSpanId: agent.spanId,
        attributes: { "brain.tool_call.status": "cancelled", "error.type": "cancelled" },
      });
    } finally {
      await client.close();
      await brain.close();
    }
  }, 90_000);

  it("a failing endpoint gets the spans later, from the same cursor; spans it refuses are dropped, not retried forever", async () => {
    const brain = await startBrain({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        BRAIN_LOG_LEVEL: "fatal", // the refusal is logged at error, on purpose
      },
    });
    const client = new Brain({ url: brain.url, token: brain.token });
    try {
      receiver.status = 503;
      const s = await client.sessions.create({
        model: { provider: "scripted", script: [{ text: "one" }, { text: "two" }] },
        tools: [],
      });
      await expect(s.send("first")).resolves.toBe("one");
      const activation = async (n: number) => {
        const rows = await brain.db.sql<{ seq: number }[]>`
          SELECT seq FROM journal WHERE session_id = ${s.id} AND kind = 'activation_started' ORDER BY seq`;
        return rows[n]!.seq;
      };
      const sentWith = (status: number, seq: number) =>
        receiver.requests.some((r) => r.status === status && r.spans.some((x) => x.spanId === spanIdOf(s.id, seq)));
      const act1 = await activation(0);
      await slow("an export answered 503", async () => sentWith(503, act1));
      // The cursor stays before the activation's end until the endpoint accepts its span.
      const [end1] = await brain.db.sql<{ seq: number }[]>`
        SELECT seq FROM journal WHERE session_id = ${s.id} AND kind = 'activation_ended'`;
      const [cursor] = await brain.db.sql<{ seq: number }[]>`
        SELECT exported_seq AS seq FROM trace_cursors WHERE session_id = ${s.id}`;
      expect(cursor?.seq ?? 0).toBeLessThan(end1!.seq);
      receiver.status = 200;
      await slow("the same spans accepted on a retry", async () => sentWith(200, act1));

      receiver.status = 400;
      await expect(s.send("second")).resolves.toBe("two");
      const act2 = await activation(1);
      await slow("an export answered 400", async () => sentWith(400, act2));
      const [last] = await brain.db.sql<{ seq: number }[]>`
        SELECT max(seq)::int AS seq FROM journal WHERE session_id = ${s.id}`;
      await slow("the cursor past the refused spans", async () => {
        const [row] = await brain.db.sql<{ seq: number }[]>`
          SELECT exported_seq AS seq FROM trace_cursors WHERE session_id = ${s.id}`;
        return row?.seq === last!.seq;
      });
      expect(receiver.spans().some((x) => x.spanId === spanIdOf(s.id, act2))).toBe(false);
    } finally {
      receiver.status = 200;
      await client.close();
      await brain.close();
    }
  }, 90_000);

  it("protobuf by default: the spans of a turn reach the endpoint as OTLP protobuf", async () => {
    const brain = await startBrain({ env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces` } });
    const client = new Brain({ url: brain.url, token: brain.token });
    try {
      const s = await client.sessions.create({ model: { provider: "scripted", script: [{ text: "hi" }] }, tools: [] });
      await expect(s.send("hello")).resolves.toBe("hi");
      const [act] = await brain.db.sql`
        SELECT seq FROM journal WHERE session_id = ${s.id} AND kind = 'activation_started'`;
      const traceId = Buffer.from(traceIdOf(s.id, Number(act!.seq)), "hex");
      const request = await slow("a protobuf export of the turn", async () =>
        receiver.requests.find((r) => r.body.includes(traceId)),
      );
      expect(request.contentType).toBe("application/x-protobuf");
      expect(request.body.includes(Buffer.from(spanIdOf(s.id, Number(act!.seq)), "hex"))).toBe(true);
    } finally {
      await client.close();
      await brain.close();
    }
  }, 90_000);
});
