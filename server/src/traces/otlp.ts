import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import type { TraceExportConfig } from "./otlp-config.js";
import type { JournalSpan } from "./spans.js";

/** Why an export failed: the status (or the network error), never the headers sent. */
export class OtlpExportError extends Error {
  constructor(
    message: string,
    /** The endpoint refused these spans themselves (400, 413): sending them again cannot help. */
    readonly refused = false,
  ) {
    super(message);
  }
}

/**
 * Sends spans to an OTLP/HTTP endpoint and resolves once it answered 2xx (the spec's success:
 * the spans are accepted; a partial success names spans it refused for good, which no retry
 * would change). Plain fetch: the exporter's own environment handling would read variables
 * behind config.ts's back.
 */
export async function exportSpans(config: TraceExportConfig, spans: JournalSpan[]): Promise<void> {
  if (spans.length === 0) return;
  const json = config.protocol === "http/json";
  const body = (json ? JsonTraceSerializer : ProtobufTraceSerializer).serializeRequest(spans);
  if (!body) throw new OtlpExportError("the spans could not be serialized");
  let res: Response;
  try {
    res = await fetch(config.url, {
      method: "POST",
      headers: { ...config.headers, "content-type": json ? "application/json" : "application/x-protobuf" },
      body,
      signal: AbortSignal.timeout(config.timeoutMs),
      redirect: "error",
    });
  } catch (error) {
    throw new OtlpExportError(`OTLP export failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  // The body is read (and dropped) so the connection can be reused.
  await res.arrayBuffer().catch(() => {});
  if (!res.ok)
    throw new OtlpExportError(`OTLP export answered ${res.status}`, res.status === 400 || res.status === 413);
}
