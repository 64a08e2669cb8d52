// BRAIN_EGRESS_ALLOW's syntax and the address ranges the guard refuses, as pure rules: nothing
// here resolves a name or opens a socket.
import { describe, expect, it } from "vitest";
import { addressKind, parseAddress } from "../../src/egress/ranges.js";
import { addressAllowed, nameAllowed, parseEgressAllow } from "../../src/egress/rules.js";

const kind = (text: string) => addressKind(parseAddress(text)!);

describe("address kinds", () => {
  it("calls only globally routable unicast public", () => {
    expect(["8.8.8.8", "1.1.1.1", "2606:4700::1111", "93.184.216.34"].map(kind)).toEqual([
      "public",
      "public",
      "public",
      "public",
    ]);
  });

  it("names every internal range, metadata addresses first", () => {
    expect({
      "127.0.0.1": kind("127.0.0.1"),
      "127.255.0.9": kind("127.255.0.9"),
      "::1": kind("::1"),
      "10.1.2.3": kind("10.1.2.3"),
      "172.16.0.1": kind("172.16.0.1"),
      "192.168.1.1": kind("192.168.1.1"),
      "169.254.169.254": kind("169.254.169.254"),
      "169.254.1.1": kind("169.254.1.1"),
      "fe80::1": kind("fe80::1"),
      "fd00:ec2::254": kind("fd00:ec2::254"),
      "fc00::1": kind("fc00::1"),
      "100.64.0.1": kind("100.64.0.1"),
      "100.100.100.200": kind("100.100.100.200"),
      "0.0.0.0": kind("0.0.0.0"),
      "::": kind("::"),
      "224.0.0.1": kind("224.0.0.1"),
      "255.255.255.255": kind("255.255.255.255"),
      "240.0.0.1": kind("240.0.0.1"),
      "192.0.0.192": kind("192.0.0.192"),
    }).toEqual({
      "127.0.0.1": "loopback",
      "127.255.0.9": "loopback",
      "::1": "loopback",
      "10.1.2.3": "private",
      "172.16.0.1": "private",
      "192.168.1.1": "private",
      "169.254.169.254": "cloud metadata",
      "169.254.1.1": "link-local",
      "fe80::1": "link-local",
      "fd00:ec2::254": "cloud metadata",
      "fc00::1": "unique-local",
      "100.64.0.1": "carrier-grade NAT",
      "100.100.100.200": "cloud metadata",
      "0.0.0.0": "unspecified",
      "::": "unspecified",
      "224.0.0.1": "multicast",
      "255.255.255.255": "broadcast",
      "240.0.0.1": "reserved",
      "192.0.0.192": "cloud metadata",
    });
  });

  it("judges an IPv6 address that carries an IPv4 one by the IPv4 address, and refuses tunnel prefixes", () => {
    expect(kind("::ffff:127.0.0.1")).toBe("loopback");
    expect(kind("::ffff:169.254.169.254")).toBe("cloud metadata");
    expect(kind("64:ff9b::a00:1")).toBe("private");
    expect(kind("::ffff:8.8.8.8")).toBe("public");
    expect(kind("2002:a00:1::")).toBe("reserved");
    expect(kind("2001::1")).toBe("reserved");
  });

  it("reads only canonical address forms: octal, hex and integer spellings are names, not addresses", () => {
    expect(parseAddress("0x7f.0.0.1")).toBeNull();
    expect(parseAddress("2130706433")).toBeNull();
    expect(parseAddress("127.1")).toBeNull();
    expect(parseAddress("[::1]")?.toString()).toBe("::1");
  });
});

describe("BRAIN_EGRESS_ALLOW", () => {
  it("takes hostnames, wildcard subdomains, addresses and ranges, each optionally with a port", () => {
    const rules = parseEgressAllow(
      " vault.internal:8200, *.corp.example ,10.1.2.3, 127.0.0.1:8080, ::1, [::1]:9000, 10.0.0.0/8:5432, fd00::/8, [fd00::/8]:443 ",
    );
    expect(rules.map((r) => [r.kind, r.port])).toEqual([
      ["host", 8200],
      ["host", null],
      ["range", null],
      ["range", 8080],
      ["range", null],
      ["range", 9000],
      ["range", 5432],
      ["range", null],
      ["range", 443],
    ]);
    const v4 = (t: string) => parseAddress(t)!;
    expect(addressAllowed(rules, v4("10.200.0.1"), 5432)).toBe(true);
    expect(addressAllowed(rules, v4("10.200.0.1"), 5433)).toBe(false);
    expect(addressAllowed(rules, v4("10.1.2.3"), 22)).toBe(true);
    expect(addressAllowed(rules, v4("127.0.0.1"), 8080)).toBe(true);
    expect(addressAllowed(rules, v4("127.0.0.1"), 8081)).toBe(false);
    expect(addressAllowed(rules, v4("::ffff:127.0.0.1"), 8080)).toBe(true);
    expect(addressAllowed(rules, v4("fd12::1"), 80)).toBe(true);
    expect(nameAllowed(rules, "vault.internal", 8200)).toBe(true);
    expect(nameAllowed(rules, "VAULT.internal.", 8200)).toBe(true);
    expect(nameAllowed(rules, "vault.internal", 443)).toBe(false);
    expect(nameAllowed(rules, "a.b.corp.example", 443)).toBe(true);
    expect(nameAllowed(rules, "corp.example", 443)).toBe(false);
    expect(nameAllowed(rules, "evilcorp.example", 443)).toBe(false);
  });

  it("is empty when empty, and names the first entry it cannot read", () => {
    expect(parseEgressAllow("")).toEqual([]);
    expect(parseEgressAllow(" , ")).toEqual([]);
    for (const bad of ["10.0.0.0/33", "host:0", "host:70000", "under_score", "a..b", "[::1", "http://x", "1.2.3.4:x"]) {
      expect(() => parseEgressAllow(`localhost,${bad}`), bad).toThrow(/BRAIN_EGRESS_ALLOW/);
    }
  });
});
