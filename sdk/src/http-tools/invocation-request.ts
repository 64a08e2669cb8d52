import type { IncomingMessage, ServerResponse } from "node:http";
import { BrainError, type HttpToolInvocation, HttpToolInvocationSchema, issuesForWire } from "../contracts.js";
import type { InvocationVerifier } from "./verify.js";

/**
 * Reads and validates the invocation Brain POSTs. Anything else is refused with a Brain error:
 * another method or media type, a body over `maxBytes`, a body Brain did not sign for this handler
 * (`unauthorized`, see verify.ts), JSON that is not an invocation.
 */
export async function readInvocation(
  req: IncomingMessage,
  maxBytes: number,
  verifier: InvocationVerifier,
): Promise<HttpToolInvocation> {
  if (req.method !== "POST") throw new BrainError("invalid_request", "POST a tool invocation here.");
  const type = String(req.headers["content-type"] ?? "");
  if (!/^application\/json\s*(;|$)/i.test(type)) throw new BrainError("unsupported_media_type");
  const text = await readBody(req, maxBytes);
  await verifier.check(req, text);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new BrainError("invalid_request", "The body is not valid JSON.");
  }
  let parsed: ReturnType<typeof HttpToolInvocationSchema.safeParse>;
  try {
    parsed = HttpToolInvocationSchema.safeParse(json);
  } catch {
    // Pathologically deep JSON exhausts the validator's stack.
    throw new BrainError("invalid_request", "The JSON is nested too deeply.");
  }
  if (!parsed.success) {
    throw new BrainError("invalid_request", "The body is not a tool invocation.", issuesForWire(parsed.error));
  }
  return parsed.data;
}

function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.reject(new BrainError("body_too_large"));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    // Listeners rather than an async iterator, whose early return would destroy the socket before
    // the 413 could be answered; the rest of an oversize body is read and dropped.
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
      else {
        req.off("data", onData);
        req.resume();
        reject(new BrainError("body_too_large"));
      }
    };
    req.on("data", onData);
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** Answers with JSON; an error keeps its code's HTTP status. */
export function answer(res: ServerResponse, status: number, body: unknown, close = false): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    ...(close ? { connection: "close" } : {}),
  });
  res.end(text);
}

export function answerError(res: ServerResponse, error: BrainError): void {
  // A body left unread (too large, say) is not waited for: the connection goes with the answer.
  answer(res, error.httpStatus, { error: error.toJSON() }, true);
}
