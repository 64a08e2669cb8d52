import { timingSafeEqual } from "node:crypto";
import type { CallKey } from "./call-key.js";
import type { SecretBox } from "./secrets.js";

/**
 * Callback tokens of tools served over HTTP. A worker that claimed a call gives the application a
 * token naming that call and the worker connection it was claimed on: `<connectionId>.<mac>`, the
 * MAC under the shared BRAIN_SECRET_KEY. Any server verifies it without storing anything, and it
 * is useless once the call ended, since every journal transition is conditional on the call being
 * open on that connection.
 */

const PURPOSE = "call-callback";
const TOKEN = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/;

function macOf(box: SecretBox, call: CallKey, connectionId: string): Buffer {
  return box.mac(PURPOSE, `${call.sessionId}/${call.seq}/${connectionId}`);
}

export function callbackToken(box: SecretBox, call: CallKey, connectionId: string): string {
  return `${connectionId}.${macOf(box, call, connectionId).toString("base64url")}`;
}

/** The connection a valid token names for this call, or null for anything else. */
export function verifyCallbackToken(box: SecretBox, token: string, call: CallKey): string | null {
  const match = TOKEN.exec(token);
  if (!match) return null;
  const connectionId = match[1]!;
  const given = Buffer.from(match[2]!, "base64url");
  const expected = macOf(box, call, connectionId);
  return given.length === expected.length && timingSafeEqual(given, expected) ? connectionId : null;
}
