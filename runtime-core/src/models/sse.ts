import { ModelCallError } from "./types.js";

/** One server-sent event: its `event:` name (absent: "message") and its joined `data:` lines. */
export interface SseEvent {
  event?: string;
  data: string;
}

/**
 * A line longer than this is not a provider's stream: fail instead of buffering without bound.
 * Providers send one JSON object per event, far below this.
 */
const MAX_LINE_CHARS = 8 * 1024 * 1024;

/**
 * Parses an event stream (the WHATWG server-sent events format) as it arrives. Bytes may split
 * anywhere, including inside a UTF-8 sequence or between the `\r` and `\n` of a line break.
 * Comments (`:` lines, keep-alives), `id:` and `retry:` are ignored. An event still pending at the
 * end of the stream is dispatched: some local servers omit the final blank line.
 */
export async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  /** How much of `buffer` is known to hold no line break: a long line is not rescanned per chunk. */
  let scanned = 0;
  let data: string[] = [];
  let event: string | undefined;

  function* lines(final: boolean): Generator<string> {
    let start = 0;
    let i = scanned;
    for (; i < buffer.length; i++) {
      const c = buffer.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      // A trailing `\r` may be the first half of `\r\n`: wait for the next bytes.
      if (c === 13 && i === buffer.length - 1 && !final) break;
      yield buffer.slice(start, i);
      if (c === 13 && buffer.charCodeAt(i + 1) === 10) i++;
      start = i + 1;
    }
    buffer = buffer.slice(start);
    scanned = i - start;
    if (buffer.length > MAX_LINE_CHARS) throw new ModelCallError("model_error", "the provider's stream is malformed");
    if (final && buffer.length > 0) {
      yield buffer;
      buffer = "";
      scanned = 0;
    }
  }

  function* feed(final: boolean): Generator<SseEvent> {
    for (const line of lines(final)) {
      if (line === "") {
        if (data.length > 0) yield { ...(event === undefined ? {} : { event }), data: data.join("\n") };
        data = [];
        event = undefined;
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "data") data.push(value);
      else if (field === "event") event = value;
    }
    if (final && data.length > 0) yield { ...(event === undefined ? {} : { event }), data: data.join("\n") };
  }

  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      yield* feed(false);
    }
    buffer += decoder.decode();
    yield* feed(true);
  } finally {
    // Stopping early (a terminal event, an error) releases the connection instead of draining it.
    reader.cancel().catch(() => {});
  }
}

/** Parses one event's data as a JSON object, or fails the call as malformed provider output. */
export function eventJson(event: SseEvent, provider: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(event.data);
  } catch {
    throw new ModelCallError("model_error", `${provider} sent a stream event that is not JSON`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ModelCallError("model_error", `${provider} sent a stream event that is not a JSON object`);
  }
  return parsed as Record<string, unknown>;
}
