// The console's only way to the server: the API with the operator token as a bearer token. The
// token stays in this tab (sessionStorage): closing the tab forgets it.

const KEY = "brain.console.token";

export const token = {
  /** @returns {string | null} */
  get: () => sessionStorage.getItem(KEY),
  /** @param {string} value */
  set: (value) => sessionStorage.setItem(KEY, value),
  clear: () => sessionStorage.removeItem(KEY),
};

/** An answer of the API that is not a success: its status and Brain's error code. */
export class ApiError extends Error {
  /** @param {number} status @param {string} code @param {string} message */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Called when the server refuses the token (401): the page asks for it again. */
let onUnauthorized = () => {};
export function whenUnauthorized(handler) {
  onUnauthorized = handler;
}

function headers() {
  return { authorization: `Bearer ${token.get() ?? ""}`, accept: "application/json" };
}

async function failure(response) {
  let code = "request_failed";
  let message = `HTTP ${response.status}`;
  try {
    const body = await response.json();
    if (body?.error?.code) code = String(body.error.code);
    if (body?.error?.message) message = String(body.error.message);
  } catch {
    // not Brain's error body: keep the status
  }
  if (response.status === 401) onUnauthorized();
  return new ApiError(response.status, code, message);
}

/**
 * GET a JSON route of the API.
 * @param {string} path with its query
 * @param {AbortSignal} [signal]
 */
export async function getJson(path, signal) {
  const response = await fetch(path, { headers: headers(), signal, cache: "no-store" });
  if (!response.ok) throw await failure(response);
  return response.json();
}

/**
 * POST a JSON body to a route of the API; resolves with its JSON answer.
 * @param {string} path
 * @param {unknown} body
 */
export async function postJson(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { ...headers(), "content-type": "application/json" },
    body: JSON.stringify(body),
    cache: "no-store",
  });
  if (!response.ok) throw await failure(response);
  return response.json();
}

/**
 * A session's journal from `after` on, following it live: the NDJSON event stream read with
 * fetch and a ReadableStream (EventSource cannot send the token). Yields one record at a time;
 * returns when the server ends the stream (the session ended), throws when it breaks.
 * @param {string} sessionId
 * @param {number} after
 * @param {AbortSignal} signal
 */
export async function* followEvents(sessionId, after, signal) {
  const path = `/v1/sessions/${encodeURIComponent(sessionId)}/events?after=${after}&follow=true`;
  const response = await fetch(path, { headers: headers(), signal, cache: "no-store" });
  if (!response.ok) throw await failure(response);
  if (!response.body) throw new ApiError(0, "request_failed", "The browser gave no response body.");
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.trim() !== "") yield JSON.parse(line);
      }
    }
  } finally {
    reader.releaseLock();
  }
}
