// Secrets at rest: AES-256-GCM sealing bound to its row, the key's fingerprint, and the key a
// development install generates once (BRAIN_SECRET_KEY unset) or refuses to generate (production).
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveSecretKeys } from "@aexhq/brain-db/connect";
import { loadOrCreateDevSecretKey, parseSecretKey, parseSecretKeys, SecretBox } from "@aexhq/brain-db/secrets";
import { describe, expect, it } from "vitest";

describe("SecretBox", () => {
  const box = new SecretBox(randomBytes(32));

  it("seals to ciphertext that does not contain the secret, and opens it again", () => {
    const secret = "sk-live-0123456789abcdef";
    const sealed = box.seal(secret, "session/model");
    expect(sealed.ciphertext.toString("utf8")).not.toContain(secret);
    expect(sealed.nonce).toHaveLength(12);
    expect(sealed.tag).toHaveLength(16);
    expect(box.open(sealed, "session/model")).toBe(secret);
    // A fresh nonce each time: sealing twice gives different ciphertexts.
    expect(box.seal(secret, "session/model").ciphertext.equals(sealed.ciphertext)).toBe(false);
  });

  it("refuses a ciphertext moved to another row (the authenticated data differs) or tampered with", () => {
    const sealed = box.seal("secret", "a/model");
    expect(() => box.open(sealed, "b/model")).toThrow();
    const tampered = { ...sealed, ciphertext: Buffer.from(sealed.ciphertext) };
    tampered.ciphertext[0] = (tampered.ciphertext[0] ?? 0) ^ 1;
    expect(() => box.open(tampered, "a/model")).toThrow();
  });

  it("names the key by a fingerprint and refuses, clearly, secrets sealed under another key", () => {
    const other = new SecretBox(randomBytes(32));
    expect(other.keyId).not.toBe(box.keyId);
    expect(box.keyId).toMatch(/^[0-9a-f]{16}$/);
    expect(() => other.open(box.seal("x", "s/n"), "s/n")).toThrow(/not in this process's BRAIN_SECRET_KEY/);
  });
});

describe("SecretBox, a key ring", () => {
  const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
  const before = new SecretBox(oldKey);
  const ring = new SecretBox([newKey, oldKey]);

  it("seals with its first key and opens what any of its keys sealed", () => {
    const sealed = before.seal("old secret", "s/model");
    expect(ring.open(sealed, "s/model")).toBe("old secret");
    expect(ring.seal("new", "s/model").keyId).toBe(new SecretBox(newKey).keyId);
    expect(ring.keyIds).toEqual([new SecretBox(newKey).keyId, before.keyId]);
    expect(() => new SecretBox(newKey).open(sealed, "s/model")).toThrow(/not in this process's BRAIN_SECRET_KEY/);
  });

  it("signs with its first key and verifies what any of its keys signed, per purpose", () => {
    const old = before.mac("callback", "call 1");
    expect(ring.verifyMac("callback", "call 1", old)).toBe(true);
    expect(ring.verifyMac("callback", "call 2", old)).toBe(false);
    expect(ring.verifyMac("other purpose", "call 1", old)).toBe(false);
    expect(new SecretBox(newKey).verifyMac("callback", "call 1", old)).toBe(false);
    expect(ring.mac("callback", "x").equals(new SecretBox(newKey).mac("callback", "x"))).toBe(true);
  });

  it("derives a key per purpose and per key, never a key itself", () => {
    const [first, second] = ring.derive("signing");
    expect([first?.keyId, second?.keyId]).toEqual(ring.keyIds);
    expect(first?.bytes.equals(newKey)).toBe(false);
    expect(first?.bytes.equals(ring.derive("other")[0]!.bytes)).toBe(false);
    expect(first?.bytes.equals(new SecretBox(newKey).derive("signing")[0]!.bytes)).toBe(true);
  });
});

describe("the secret key", () => {
  it("parses 64 hex digits or base64 of 32 bytes, and nothing else", () => {
    const key = randomBytes(32);
    expect(parseSecretKey(key.toString("hex"))?.equals(key)).toBe(true);
    expect(parseSecretKey(key.toString("base64"))?.equals(key)).toBe(true);
    expect(parseSecretKey("too-short")).toBeNull();
    expect(parseSecretKey(randomBytes(16).toString("hex"))).toBeNull();
  });

  it("is generated once into the data directory (mode 0600) and reused", () => {
    const dir = mkdtempSync(join(tmpdir(), "brain-key-"));
    const first = loadOrCreateDevSecretKey(join(dir, "data"));
    expect(first.created).toBe(true);
    expect(statSync(first.path).mode & 0o777).toBe(0o600);
    expect(readFileSync(first.path, "utf8").trim()).toBe(first.key.toString("hex"));
    const again = resolveSecretKeys({ BRAIN_DATA_DIR: join(dir, "data") });
    expect(again).toHaveLength(1);
    expect(again[0]!.equals(first.key)).toBe(true);
  });

  it("is never generated in production, and BRAIN_SECRET_KEY wins when set", () => {
    const dir = mkdtempSync(join(tmpdir(), "brain-key-"));
    expect(() => resolveSecretKeys({ BRAIN_DATA_DIR: dir, NODE_ENV: "production" })).toThrow(
      /BRAIN_SECRET_KEY is required/,
    );
    const key = randomBytes(32).toString("hex");
    const ring = resolveSecretKeys({ BRAIN_DATA_DIR: dir, NODE_ENV: "production", BRAIN_SECRET_KEY: key });
    expect(ring.map((k) => k.toString("hex"))).toEqual([key]);
    expect(parseSecretKeys(`${key},${"0".repeat(64)}`)).toHaveLength(2);
    expect(parseSecretKeys(`${key},short`)).toBeNull();
  });
});
