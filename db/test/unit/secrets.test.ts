// Secrets at rest: AES-256-GCM sealing bound to its row, the key's fingerprint, and the key a
// development install generates once (BRAIN_SECRET_KEY unset) or refuses to generate (production).
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadOrCreateDevSecretKey, parseSecretKey, resolveSecretKey, SecretBox } from "@aexhq/brain-db";
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
    expect(() => other.open(box.seal("x", "s/n"), "s/n")).toThrow(/same BRAIN_SECRET_KEY/);
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
    const again = resolveSecretKey({ BRAIN_DATA_DIR: join(dir, "data") });
    expect(again.equals(first.key)).toBe(true);
  });

  it("is never generated in production, and BRAIN_SECRET_KEY wins when set", () => {
    const dir = mkdtempSync(join(tmpdir(), "brain-key-"));
    expect(() => resolveSecretKey({ BRAIN_DATA_DIR: dir, NODE_ENV: "production" })).toThrow(
      /BRAIN_SECRET_KEY is required/,
    );
    const key = randomBytes(32).toString("hex");
    expect(
      resolveSecretKey({ BRAIN_DATA_DIR: dir, NODE_ENV: "production", BRAIN_SECRET_KEY: key }).toString("hex"),
    ).toBe(key);
  });
});
