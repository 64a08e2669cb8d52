import { startTcpProxy, type TcpProxy } from "./tcp-proxy.js";

/**
 * A TCP proxy in front of a test's Postgres that records the statements its clients run, read off
 * the frontend protocol: a simple Query's text, and for the extended protocol each Bind with the
 * text of the statement it binds (from its Parse) and its parameters (text-format values; a binary
 * one reads as null). Recording starts and stops on demand, so a test can take the statements of
 * exactly the work it drives.
 */
export interface RecordedStatement {
  text: string;
  params: (string | null)[];
}

export interface StatementRecorder extends TcpProxy {
  /** Starts recording (again), forgetting what was recorded before. */
  start(): void;
  /** Stops recording and answers what was recorded, in the order the server received it. */
  stop(): RecordedStatement[];
}

const SSL_REQUEST = 80877103;
const GSS_REQUEST = 80877104;

/** Reads one client's messages: untyped until the startup message, typed after it. */
function frontendReader(onStatement: (s: RecordedStatement) => void) {
  let pending = Buffer.alloc(0);
  let started = false;
  const parsed = new Map<string, string>();
  const message = (type: number, body: Buffer) => {
    if (type === 0x51) onStatement({ text: cstring(body, 0).value, params: [] });
    else if (type === 0x50) {
      const name = cstring(body, 0);
      parsed.set(name.value, cstring(body, name.next).value);
    } else if (type === 0x42) {
      const bound = readBind(body);
      const text = parsed.get(bound.statement);
      if (text !== undefined) onStatement({ text, params: bound.params });
    }
  };
  return (chunk: Buffer) => {
    let all = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
    while (true) {
      if (!started) {
        if (all.length < 8) break;
        const length = all.readUInt32BE(0);
        if (all.length < length) break;
        const code = all.readUInt32BE(4);
        if (code !== SSL_REQUEST && code !== GSS_REQUEST) started = true;
        all = all.subarray(length);
        continue;
      }
      if (all.length < 5) break;
      const end = 1 + all.readUInt32BE(1);
      if (all.length < end) break;
      message(all[0]!, all.subarray(5, end));
      all = all.subarray(end);
    }
    pending = Buffer.from(all);
  };
}

function cstring(buf: Buffer, at: number): { value: string; next: number } {
  const end = buf.indexOf(0, at);
  return { value: buf.toString("utf8", at, end), next: end + 1 };
}

/** A Bind message's statement name and its parameters as text (binary ones as null). */
function readBind(body: Buffer): { statement: string; params: (string | null)[] } {
  const portal = cstring(body, 0);
  const statement = cstring(body, portal.next);
  let at = statement.next;
  const formatCount = body.readUInt16BE(at);
  at += 2;
  const formats: number[] = [];
  for (let i = 0; i < formatCount; i++, at += 2) formats.push(body.readUInt16BE(at));
  const paramCount = body.readUInt16BE(at);
  at += 2;
  const params: (string | null)[] = [];
  for (let i = 0; i < paramCount; i++) {
    const length = body.readInt32BE(at);
    at += 4;
    const format = formats.length === 1 ? formats[0] : (formats[i] ?? 0);
    if (length < 0) params.push(null);
    else {
      params.push(format === 0 ? body.toString("utf8", at, at + length) : null);
      at += length;
    }
  }
  return { statement: statement.value, params };
}

export async function startStatementRecorder(url: string): Promise<StatementRecorder> {
  let recording = false;
  let recorded: RecordedStatement[] = [];
  const proxy = await startTcpProxy(url, ({ client, upstream }) => {
    const read = frontendReader((s) => {
      if (recording) recorded.push(s);
    });
    client.on("data", (chunk: Buffer) => {
      read(chunk);
      upstream.write(chunk);
    });
    upstream.on("data", (chunk) => client.write(chunk));
  });
  return {
    through: proxy.through,
    close: proxy.close,
    start() {
      recorded = [];
      recording = true;
    },
    stop() {
      recording = false;
      return recorded;
    },
  };
}
