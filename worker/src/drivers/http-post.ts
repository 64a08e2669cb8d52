/**
 * One JSON POST from a worker to a URL an application serves, with the bounds a worker needs: the
 * request stops when `signal` aborts (deadline, call ended, shutdown), redirects are not followed,
 * and at most `maxBytes` of the answer are kept (the rest is not read). node:http rather than fetch:
 * fetch's own header and body timeouts (300 s) would cut long tool calls short.
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { errorOutcome, type Outcome, storableText } from "@aexhq/brain-contracts";

export interface PostAnswer {
  status: number;
  /** The answer's first `maxBytes` bytes. */
  body: Buffer;
  /** The answer was longer than `maxBytes`. */
  overflow: boolean;
}

export function postJson(
  url: string,
  payload: unknown,
  options: { signal: AbortSignal; maxBytes: number },
): Promise<PostAnswer> {
  const text = JSON.stringify(payload);
  const target = new URL(url);
  const send = target.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json",
          "content-length": Buffer.byteLength(text),
        },
        signal: options.signal,
      },
      (res) => readBounded(res, options.maxBytes).then(resolve, reject),
    );
    req.on("error", reject);
    req.end(text);
  });
}

function readBounded(res: IncomingMessage, maxBytes: number): Promise<PostAnswer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const status = res.statusCode ?? 0;
    res.on("data", (chunk: Buffer) => {
      const room = maxBytes - size;
      size += chunk.length;
      if (chunk.length <= room) {
        chunks.push(chunk);
        return;
      }
      chunks.push(chunk.subarray(0, Math.max(room, 0)));
      resolve({ status, body: Buffer.concat(chunks), overflow: true });
      res.destroy();
    });
    res.on("end", () => resolve({ status, body: Buffer.concat(chunks), overflow: false }));
    res.on("error", reject);
    res.on("close", () => {
      if (!res.complete) reject(new Error("the answer was cut short"));
    });
  });
}

/** How much of an answer's body an http_error outcome keeps. */
export const BODY_EXCERPT_BYTES = 2048;

/** `http_error` for an answer that is not what the protocol expects (a non-2xx status, say). */
export function answerError(what: string, answer: PostAnswer): Outcome {
  // Journaled with the outcome: made storable (NUL → U+FFFD).
  const body = storableText(answer.body.subarray(0, BODY_EXCERPT_BYTES).toString("utf8"));
  const brain = brainErrorOf(body);
  const message = `${what}${brain ? `: ${brain.code}: ${brain.message}` : ""}`;
  return errorOutcome("http_error", message.slice(0, 8192), { status: answer.status, body });
}

/** `http_error` for a URL that could not be reached (its text may hold credentials: never shown). */
export function unreachable(error: unknown): Outcome {
  const e = error as NodeJS.ErrnoException;
  const reason = e.code ?? (e.message || String(error));
  return errorOutcome("http_error", `The tool's URL could not be reached: ${reason}`.slice(0, 8192), {
    status: null,
  });
}

/** The `{ error: { code, message } }` body an SDK adapter answers with, when it is one. */
function brainErrorOf(text: string): { code: string; message: string } | null {
  try {
    const e = (JSON.parse(text) as { error?: { code?: unknown; message?: unknown } }).error;
    if (typeof e?.code === "string" && typeof e.message === "string") return { code: e.code, message: e.message };
  } catch {}
  return null;
}
