/**
 * Brain's own origins, for endpoints a browser could be made to reach (the MCP endpoint): the
 * origin of BRAIN_PUBLIC_URL and those of the addresses the server listens on (a wildcard or a
 * loopback address as `localhost`, `127.0.0.1` and `[::1]`). A request whose Origin header names
 * anything else comes from a page Brain did not serve: a DNS rebinding attack, say.
 */
import type { AddressInfo } from "node:net";

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

export function ownOrigins(publicUrl: string | undefined, addresses: readonly AddressInfo[]): Set<string> {
  const own = new Set<string>();
  if (publicUrl) own.add(new URL(publicUrl).origin);
  for (const a of addresses) {
    const loopback = ["0.0.0.0", "::", "127.0.0.1", "::1"].includes(a.address);
    const names = loopback ? LOOPBACK_NAMES : [a.family === "IPv6" ? `[${a.address}]` : a.address];
    for (const name of names) own.add(`http://${name}:${a.port}`);
  }
  return own;
}

/** Whether a request's Origin header is acceptable: absent, or one of Brain's own origins. */
export function originAllowed(origin: string | undefined, own: ReadonlySet<string>): boolean {
  if (origin === undefined) return true;
  if (!URL.canParse(origin)) return false;
  return own.has(new URL(origin).origin);
}
