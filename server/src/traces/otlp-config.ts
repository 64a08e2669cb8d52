import { z } from "zod";

/**
 * Where and how traces are exported: the standard OpenTelemetry exporter variables, the
 * traces-specific one winning over the general one, as the OTLP exporter specification says.
 * No endpoint (or OTEL_TRACES_EXPORTER=none): no export, no exporter loop.
 */
export interface TraceExportConfig {
  /** The full URL spans are POSTed to (…/v1/traces). */
  url: string;
  /** Sent with every export (an API key, say); never logged. */
  headers: Record<string, string>;
  protocol: "http/protobuf" | "http/json";
  timeoutMs: number;
  /** The spans' resource: OTEL_RESOURCE_ATTRIBUTES, with service.name from OTEL_SERVICE_NAME. */
  resource: Record<string, string>;
}

const Protocol = z.enum(["http/protobuf", "http/json"], {
  error: "http/protobuf or http/json (gRPC is not supported: use an OTLP/HTTP endpoint)",
});

/** `key=value,key2=value2`, values percent-decoded (the W3C Baggage format the spec names). */
const Headers = z.string().refine((v) => parseHeaders(v) !== null, "comma-separated key=value pairs");

export const TraceEnvSchema = z.object({
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_HEADERS: Headers.optional(),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: Headers.optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: Protocol.optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: Protocol.optional(),
  OTEL_EXPORTER_OTLP_TIMEOUT: z.coerce.number().int().positive().optional(),
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: z.coerce.number().int().positive().optional(),
  OTEL_TRACES_EXPORTER: z.string().optional(),
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  OTEL_RESOURCE_ATTRIBUTES: Headers.optional(),
});

export function traceExportConfig(env: z.output<typeof TraceEnvSchema>): TraceExportConfig | null {
  if (env.OTEL_TRACES_EXPORTER?.split(",").some((e) => e.trim() === "none")) return null;
  const url = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? signalUrl(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (!url) return null;
  return {
    url,
    // Per-signal headers add to (and override) the general ones.
    headers: {
      ...parseHeaders(env.OTEL_EXPORTER_OTLP_HEADERS ?? ""),
      ...parseHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? ""),
    },
    protocol: env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/protobuf",
    timeoutMs: env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? env.OTEL_EXPORTER_OTLP_TIMEOUT ?? 10_000,
    resource: resourceAttributes(env.OTEL_RESOURCE_ATTRIBUTES, env.OTEL_SERVICE_NAME),
  };
}

/** As the SDK's resource detection reads them: OTEL_SERVICE_NAME wins, else "brain". */
function resourceAttributes(text: string | undefined, serviceName: string | undefined): Record<string, string> {
  const attributes = parseHeaders(text ?? "", false) ?? {};
  attributes["service.name"] = serviceName ?? attributes["service.name"] ?? "brain";
  return attributes;
}

/** The general endpoint is a base: the signal's path is appended to it. */
function signalUrl(base: string | undefined): string | undefined {
  if (!base) return undefined;
  return `${base.replace(/\/+$/, "")}/v1/traces`;
}

/** `key=value,…` with percent-encoded values; header names are lower-cased (`lower`). */
function parseHeaders(text: string, lower = true): Record<string, string> | null {
  const headers: Record<string, string> = {};
  for (const part of text.split(",")) {
    if (part.trim() === "") continue;
    const eq = part.indexOf("=");
    if (eq <= 0) return null;
    const key = part.slice(0, eq).trim();
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key)) return null;
    try {
      headers[lower ? key.toLowerCase() : key] = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      return null;
    }
  }
  return headers;
}
