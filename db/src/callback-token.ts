import type { CallKey } from "./call-key.js";
import type { SecretBox } from "./secrets.js";

/**
 * Callback tokens of tools served over HTTP and of HTTP Environments granted the model. A worker
 * that claimed a call gives the application (or the Environment's service) a token naming that
 * call, the worker connection it was claimed on, the one route it may use (`frames` for results
 * and finishes, `model` for the granted model execution service) and when it expires:
 * `<route>.<connectionId>.<expires>.<mac>`, the MAC under the shared BRAIN_SECRET_KEY (any key of
 * the ring verifies). Any server verifies it without storing anything, and it is useless once the
 * call ended, since every journal transition is conditional on the call being open on that
 * connection.
 */

export type CallbackRoute = "frames" | "model";

const PURPOSE = "call-callback-v2";
const TOKEN =
  /^(frames|model)\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.(\d{1,15})\.([A-Za-z0-9_-]{43})$/;
/** A call without a deadline: its tokens last this long. */
export const CALLBACK_TOKEN_TTL_MS = 7 * 24 * 3600 * 1000;
/** A call with a deadline: its tokens outlast it by this much (a finish racing the deadline). */
const AFTER_DEADLINE_MS = 60_000;

function message(route: CallbackRoute, call: CallKey, connectionId: string, expires: number): string {
  return `${route}/${call.sessionId}/${call.seq}/${connectionId}/${expires}`;
}

export function callbackToken(
  box: SecretBox,
  route: CallbackRoute,
  call: CallKey & { deadline: number | null },
  connectionId: string,
  now = Date.now(),
): string {
  const until = call.deadline === null ? now + CALLBACK_TOKEN_TTL_MS : call.deadline + AFTER_DEADLINE_MS;
  const expires = Math.ceil(until / 1000);
  const mac = box.mac(PURPOSE, message(route, call, connectionId, expires)).toString("base64url");
  return `${route}.${connectionId}.${expires}.${mac}`;
}

/** The connection a valid, unexpired token for this route names for this call, or null. */
export function verifyCallbackToken(
  box: SecretBox,
  token: string,
  route: CallbackRoute,
  call: CallKey,
  now = Date.now(),
): string | null {
  const match = TOKEN.exec(token);
  if (!match || match[1] !== route) return null;
  const connectionId = match[2]!;
  const expires = Number(match[3]);
  if (expires * 1000 < now) return null;
  const given = Buffer.from(match[4]!, "base64url");
  return box.verifyMac(PURPOSE, message(route, call, connectionId, expires), given) ? connectionId : null;
}
