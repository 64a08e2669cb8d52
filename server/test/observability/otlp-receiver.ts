// An OTLP/HTTP trace receiver for tests: a plain node:http server that accepts POST /v1/traces,
// keeps every request (JSON decoded; protobuf kept as bytes) with the time it arrived.
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** The derivation docs/observability.md documents: trace and span ids are hashes of (session, sequence). */
export const traceIdOf = (session: string, activation: number) =>
  createHash("sha256").update(`brain.trace:${session}:${activation}`).digest("hex").slice(0, 32);
export const spanIdOf = (session: string, seq: number) =>
  createHash("sha256").update(`brain.span:${session}:${seq}`).digest("hex").slice(0, 16);

type AnyValue = {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  arrayValue?: { values: AnyValue[] };
};
type KeyValue = { key: string; value: AnyValue };

/** A span as OTLP JSON carries it (ids in hex), with attributes flattened to plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[];
  status: { code?: number; message?: string };
}

export interface ReceivedRequest {
  at: number;
  /** What the receiver answered. */
  status: number;
  contentType: string;
  body: Buffer;
  /** Decoded spans of a JSON request; empty for protobuf. */
  spans: ReceivedSpan[];
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  requests: ReceivedRequest[];
  /** The status the next requests are answered with (default 200). */
  status: number;
  /** Spans of the requests answered 2xx. */
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const requests: ReceivedRequest[] = [];
  const state = { status: 200 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end();
        return;
      }
      const body = Buffer.concat(chunks);
      const contentType = req.headers["content-type"] ?? "";
      const spans = contentType.startsWith("application/json") ? decode(JSON.parse(body.toString("utf8"))) : [];
      const status = state.status;
      requests.push({ at: Date.now(), status, contentType, body, spans });
      res
        .writeHead(status, { "content-type": contentType })
        .end(contentType.startsWith("application/json") ? "{}" : "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get status() {
      return state.status;
    },
    set status(value: number) {
      state.status = value;
    },
    spans: () => requests.filter((r) => r.status < 300).flatMap((r) => r.spans),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function decode(body: { resourceSpans?: { scopeSpans?: { spans?: Record<string, unknown>[] }[] }[] }): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((rs) =>
    (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        traceId: s.traceId as string,
        spanId: s.spanId as string,
        parentSpanId: (s.parentSpanId as string | undefined) || undefined,
        name: s.name as string,
        kind: s.kind as number,
        startTimeUnixNano: String(s.startTimeUnixNano),
        endTimeUnixNano: String(s.endTimeUnixNano),
        attributes: flatten(s.attributes as KeyValue[] | undefined),
        events: ((s.events as { name: string; attributes?: KeyValue[] }[] | undefined) ?? []).map((e) => ({
          name: e.name,
          attributes: flatten(e.attributes),
        })),
        links: ((s.links as { traceId: string; spanId: string; attributes?: KeyValue[] }[] | undefined) ?? []).map(
          (l) => ({ traceId: l.traceId, spanId: l.spanId, attributes: flatten(l.attributes) }),
        ),
        status: (s.status as ReceivedSpan["status"]) ?? {},
      })),
    ),
  );
}

function flatten(attributes: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((attributes ?? []).map((a) => [a.key, value(a.value)]));
}

function value(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return v.arrayValue.values.map(value);
  return undefined;
}
