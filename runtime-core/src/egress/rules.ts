/**
 * BRAIN_EGRESS_ALLOW: what the operator opens beyond the public internet. A comma-separated list
 * of entries, each a hostname (`vault.internal`, or `*.corp.example` for its subdomains), an IP
 * address (`10.1.2.3`, `::1`) or a CIDR range (`10.0.0.0/8`, `fd00::/8`), optionally with a port
 * (`10.1.2.3:8443`, `[::1]:8080`, `10.0.0.0/8:5432`, `[fd00::/8]:443`, `vault.internal:8200`).
 * A hostname entry opens that name whatever it resolves to; an address or range entry opens the
 * addresses in it, whatever name led there.
 */
import ipaddr from "ipaddr.js";
import { type Ip, inRange, parseAddress } from "./ranges.js";

export type EgressRule =
  | { kind: "range"; range: [Ip, number]; port: number | null; text: string }
  | { kind: "host"; name: string; port: number | null; text: string };

/** Loopback, as the embedded development default opens it. */
export const LOOPBACK_ALLOW = "localhost,127.0.0.0/8,::1";

const HOSTNAME = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** The rules of a BRAIN_EGRESS_ALLOW value; throws an Error naming the first bad entry. */
export function parseEgressAllow(text: string): EgressRule[] {
  return text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
    .map(parseEntry);
}

function parseEntry(entry: string): EgressRule {
  const { target, port } = splitPort(entry);
  const range = rangeOf(target);
  if (range) return { kind: "range", range, port, text: entry };
  const name = target.toLowerCase().replace(/\.$/, "");
  if (name.length <= 253 && HOSTNAME.test(name) && !target.includes("[")) {
    return { kind: "host", name, port, text: entry };
  }
  throw new Error(`BRAIN_EGRESS_ALLOW: ${JSON.stringify(entry)} is not a hostname, IP address or CIDR range`);
}

/** `[…]:port`, `addr/bits:port`, `host:port`; a bare IPv6 address has no port. */
function splitPort(entry: string): { target: string; port: number | null } {
  let target = entry;
  let portText: string | null = null;
  if (entry.startsWith("[")) {
    const close = entry.indexOf("]");
    target = close > 0 ? entry.slice(1, close) : entry;
    const rest = close > 0 ? entry.slice(close + 1) : "";
    if (rest !== "") {
      if (!rest.startsWith(":")) throw new Error(`BRAIN_EGRESS_ALLOW: ${JSON.stringify(entry)} is malformed`);
      portText = rest.slice(1);
    }
  } else if (entry.includes("/")) {
    const [address, bits = ""] = entry.split("/", 2) as [string, string?];
    const colon = bits.indexOf(":");
    target = colon < 0 ? entry : `${address}/${bits.slice(0, colon)}`;
    portText = colon < 0 ? null : bits.slice(colon + 1);
  } else if (entry.split(":").length === 2) {
    const colon = entry.indexOf(":");
    target = entry.slice(0, colon);
    portText = entry.slice(colon + 1);
  }
  if (portText === null) return { target, port: null };
  const port = /^\d{1,5}$/.test(portText) ? Number(portText) : Number.NaN;
  if (!(port >= 1 && port <= 65535)) throw new Error(`BRAIN_EGRESS_ALLOW: ${JSON.stringify(entry)} has a bad port`);
  return { target, port };
}

function rangeOf(target: string): [Ip, number] | null {
  if (target.includes("/")) {
    if (!ipaddr.isValidCIDR(target)) return null;
    const [address, bits] = ipaddr.parseCIDR(target);
    return [address, bits];
  }
  const address = parseAddress(target);
  if (!address) return null;
  return [address, address.kind() === "ipv4" ? 32 : 128];
}

/** Whether a hostname entry opens this name on this port, whatever it resolves to. */
export function nameAllowed(rules: readonly EgressRule[], hostname: string, port: number): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  return rules.some(
    (rule) =>
      rule.kind === "host" &&
      (rule.port === null || rule.port === port) &&
      (rule.name.startsWith("*.") ? host.endsWith(rule.name.slice(1)) : host === rule.name),
  );
}

/** Whether an address or range entry opens this address on this port. */
export function addressAllowed(rules: readonly EgressRule[], address: Ip, port: number): boolean {
  return rules.some(
    (rule) => rule.kind === "range" && (rule.port === null || rule.port === port) && inRange(address, rule.range),
  );
}
