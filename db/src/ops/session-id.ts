import { randomBytes } from "node:crypto";

/**
 * A new session's id: a UUIDv7 (RFC 9562), its first 48 bits the creation time in ms, the rest
 * random. The journal and the call tables are partitioned by week of session id (migration 0023),
 * so a session's rows land in its week's partition and retention drops weeks whole.
 */
export function newSessionId(now = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
