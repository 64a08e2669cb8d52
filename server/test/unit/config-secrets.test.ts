// Finding 7 of the tenant review: a server listening beyond loopback could start with a generated
// operator token (printed to whoever reads its output) and a generated key (a different one on
// every replica when NODE_ENV=production was forgotten). It now refuses to start without both.
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "@aexhq/brain-server";
import { describe, expect, it } from "vitest";

const dataDir = () => mkdtempSync(join(tmpdir(), "brain-config-"));
const key = () => randomBytes(32).toString("hex");

describe("a server beyond loopback", () => {
  it("refuses to start without an operator token and a secret key of its own", () => {
    for (const host of ["0.0.0.0", "::", "10.0.0.4", "brain.internal"]) {
      expect(() => parseConfig({ BRAIN_HOST: host, BRAIN_DATA_DIR: dataDir() })).toThrow(
        /listens beyond loopback, so BRAIN_API_TOKEN and BRAIN_SECRET_KEY must be set/,
      );
      expect(() =>
        parseConfig({ BRAIN_HOST: host, BRAIN_API_TOKEN: "x".repeat(32), BRAIN_DATA_DIR: dataDir() }),
      ).toThrow(/so BRAIN_SECRET_KEY must be set/);
      expect(parseConfig({ BRAIN_HOST: host, BRAIN_API_TOKEN: "x".repeat(32), BRAIN_SECRET_KEY: key() }).host).toBe(
        host,
      );
    }
  });

  it("starts on loopback with what it generates, as the development default", () => {
    for (const host of ["127.0.0.1", "localhost", "::1"]) {
      expect(parseConfig({ BRAIN_HOST: host, BRAIN_DATA_DIR: dataDir() }).secretKeys).toHaveLength(1);
    }
  });

  it("takes a key ring, the sealing key first", () => {
    const [a, b] = [key(), key()];
    const config = parseConfig({ BRAIN_SECRET_KEY: `${a},${b}`, BRAIN_DATA_DIR: dataDir() });
    expect(config.secretKeys.map((k) => k.toString("hex"))).toEqual([a, b]);
    expect(() => parseConfig({ BRAIN_SECRET_KEY: `${a},nope`, BRAIN_DATA_DIR: dataDir() })).toThrow(/BRAIN_SECRET_KEY/);
  });
});
