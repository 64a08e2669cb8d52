/**
 * What kind of address an IP is, for egress: `public` (globally routable unicast) or the name of
 * the range that makes it internal (loopback, private, link-local, …). IPv6 forms that carry an
 * IPv4 address (IPv4-mapped, NAT64's 64:ff9b::/96) are judged by the IPv4 address they carry; the
 * tunnelling prefixes (6to4, Teredo) are refused whole, since they can point anywhere.
 */
import ipaddr from "ipaddr.js";

/** Addresses clouds serve instance metadata (and so credentials) on, named as such in refusals. */
const METADATA = new Set(["169.254.169.254", "169.254.170.2", "100.100.100.200", "192.0.0.192", "fd00:ec2::254"]);

export type AddressKind =
  | "public"
  | "loopback"
  | "private"
  | "link-local"
  | "unique-local"
  | "carrier-grade NAT"
  | "cloud metadata"
  | "unspecified"
  | "multicast"
  | "broadcast"
  | "reserved";

export type Ip = ipaddr.IPv4 | ipaddr.IPv6;

/** Null when `text` is not an IP address in a canonical form (brackets around IPv6 allowed). */
export function parseAddress(text: string): Ip | null {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (!ipaddr.isValid(bare)) return null;
  // Only the canonical textual forms: "0x7f.1" or "2130706433" are not what a resolver answers.
  if (!ipaddr.IPv6.isValid(bare) && !ipaddr.IPv4.isValidFourPartDecimal(bare)) return null;
  return ipaddr.parse(bare);
}

export function addressKind(address: Ip): AddressKind {
  const ip = embeddedIPv4(address) ?? address;
  if (METADATA.has(ip.toNormalizedString()) || METADATA.has(ip.toString())) return "cloud metadata";
  const range = ip.range();
  switch (range) {
    case "unicast":
      return "public";
    case "loopback":
    case "private":
    case "unspecified":
    case "multicast":
    case "broadcast":
      return range;
    case "linkLocal":
      return "link-local";
    case "uniqueLocal":
      return "unique-local";
    case "carrierGradeNat":
      return "carrier-grade NAT";
    default:
      return "reserved";
  }
}

/** The IPv4 address an IPv4-mapped or NAT64 (64:ff9b::/96) IPv6 address stands for. */
function embeddedIPv4(address: Ip): ipaddr.IPv4 | null {
  if (address.kind() !== "ipv6") return null;
  const range = address.range();
  if (range !== "ipv4Mapped" && range !== "rfc6052") return null;
  return new ipaddr.IPv4(address.toByteArray().slice(12));
}

/** Whether `address` lies in `cidr` (both already parsed; an IPv4-mapped address as its IPv4). */
export function inRange(address: Ip, cidr: [Ip, number]): boolean {
  const ip = embeddedIPv4(address) ?? address;
  return ip.kind() === cidr[0].kind() && ip.match(cidr);
}
