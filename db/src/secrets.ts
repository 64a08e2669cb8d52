import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Secrets at rest (provider API keys, Environment headers): AES-256-GCM under the server key
 * (BRAIN_SECRET_KEY). Each secret is bound to its row by the additional authenticated data, so a
 * ciphertext copied to another session or name fails to open instead of decrypting there.
 */
export interface Sealed {
  keyId: string;
  nonce: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

export class SecretBox {
  /** A fingerprint of the key, stored with each secret: never the key itself. */
  readonly keyId: string;
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error("the secret key must be 32 bytes");
    this.#key = Buffer.from(key);
    this.keyId = createHash("sha256").update("brain-secret-key-id\0").update(key).digest("hex").slice(0, 16);
  }

  seal(plaintext: string, aad: string): Sealed {
    const nonce = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.#key, nonce);
    cipher.setAAD(Buffer.from(aad, "utf8"));
    const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return { keyId: this.keyId, nonce, ciphertext, tag: cipher.getAuthTag() };
  }

  /**
   * HMAC-SHA256 of `message` under a key derived from this key for `purpose` alone, so a MAC made
   * for one purpose (a callback token, say) never verifies as another's.
   */
  mac(purpose: string, message: string): Buffer {
    const key = createHmac("sha256", this.#key).update(`brain-mac\0${purpose}`).digest();
    return createHmac("sha256", key).update(message, "utf8").digest();
  }

  open(sealed: Sealed, aad: string): string {
    if (sealed.keyId !== this.keyId) {
      throw new Error(
        `the secret was sealed under key ${sealed.keyId}, not this process's key ${this.keyId}: set the same BRAIN_SECRET_KEY on every server and worker`,
      );
    }
    const decipher = createDecipheriv("aes-256-gcm", this.#key, sealed.nonce);
    decipher.setAAD(Buffer.from(aad, "utf8"));
    decipher.setAuthTag(sealed.tag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString("utf8");
  }
}

/** BRAIN_SECRET_KEY: 64 hex digits, or base64 of 32 bytes. */
export function parseSecretKey(text: string): Buffer | null {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, "hex");
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) {
    const b = Buffer.from(t, "base64");
    if (b.length === 32) return b;
  }
  return null;
}

export const SECRET_KEY_FILE = "secret.key";

/**
 * The key of a development install: read from `<dataDir>/secret.key`, or generated there (mode
 * 0600) on first use. A server and a worker started together agree on it (the file is created
 * exclusively; whoever loses the race reads the winner's). Production sets BRAIN_SECRET_KEY.
 */
export function loadOrCreateDevSecretKey(dataDir: string): { key: Buffer; path: string; created: boolean } {
  const path = join(dataDir, SECRET_KEY_FILE);
  const read = () => {
    const key = parseSecretKey(readFileSync(path, "utf8"));
    if (!key) throw new Error(`${path} does not hold a 32-byte key (64 hex digits)`);
    return key;
  };
  try {
    return { key: read(), path, created: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32);
  try {
    writeFileSync(path, `${key.toString("hex")}\n`, { mode: 0o600, flag: "wx" });
    return { key, path, created: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return { key: read(), path, created: false };
  }
}
