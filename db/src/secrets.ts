import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Secrets at rest (provider API keys, Environment headers): AES-256-GCM under the server key
 * (BRAIN_SECRET_KEY). Each secret is bound to its row by the additional authenticated data, so a
 * ciphertext copied to another session or name fails to open instead of decrypting there.
 *
 * The key is a ring: the first key seals and signs, every key of the ring opens what it sealed and
 * verifies what it signed. Rotating is adding a new first key (the old ones after it), re-sealing
 * (`brain keys rotate`), then dropping the old ones.
 */
export interface Sealed {
  keyId: string;
  nonce: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

export class SecretBox {
  /** A fingerprint of the primary key, stored with each secret it seals: never the key itself. */
  readonly keyId: string;
  /** Every key of the ring by its fingerprint, the primary first. */
  readonly #ring: Map<string, Buffer>;

  constructor(keys: Buffer | readonly Buffer[]) {
    const ring = Buffer.isBuffer(keys) ? [keys] : keys;
    if (ring.length === 0) throw new Error("the secret key ring is empty");
    this.#ring = new Map();
    for (const key of ring) {
      if (key.length !== 32) throw new Error("the secret key must be 32 bytes");
      this.#ring.set(keyFingerprint(key), Buffer.from(key));
    }
    this.keyId = this.#ring.keys().next().value as string;
  }

  /** The fingerprints of the ring's keys, the primary first. */
  get keyIds(): string[] {
    return [...this.#ring.keys()];
  }

  seal(plaintext: string, aad: string): Sealed {
    const nonce = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.#primary, nonce);
    cipher.setAAD(Buffer.from(aad, "utf8"));
    const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return { keyId: this.keyId, nonce, ciphertext, tag: cipher.getAuthTag() };
  }

  /**
   * HMAC-SHA256 of `message` under a key derived from the primary key for `purpose` alone, so a
   * MAC made for one purpose (a callback token, say) never verifies as another's.
   */
  mac(purpose: string, message: string): Buffer {
    return macUnder(this.#primary, purpose, message);
  }

  /** Whether `given` is the MAC of `message` for `purpose` under any key of the ring. */
  verifyMac(purpose: string, message: string, given: Buffer): boolean {
    let ok = false;
    for (const key of this.#ring.values()) {
      const expected = macUnder(key, purpose, message);
      ok = (given.length === expected.length && timingSafeEqual(given, expected)) || ok;
    }
    return ok;
  }

  /**
   * A 32-byte key derived from each key of the ring for `purpose` (the invocation signing keys'
   * seeds, say), the primary's first: never usable as the keys themselves.
   */
  derive(purpose: string): { keyId: string; bytes: Buffer }[] {
    return [...this.#ring].map(([keyId, key]) => ({
      keyId,
      bytes: Buffer.from(hkdfSync("sha256", key, "brain", purpose, 32)),
    }));
  }

  open(sealed: Sealed, aad: string): string {
    const key = this.#ring.get(sealed.keyId);
    if (!key) {
      throw new Error(
        `the secret was sealed under key ${sealed.keyId}, which is not in this process's BRAIN_SECRET_KEY (${this.keyIds.join(", ")}): set the same keys on every server and worker`,
      );
    }
    const decipher = createDecipheriv("aes-256-gcm", key, sealed.nonce);
    decipher.setAAD(Buffer.from(aad, "utf8"));
    decipher.setAuthTag(sealed.tag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString("utf8");
  }

  get #primary(): Buffer {
    return this.#ring.get(this.keyId)!;
  }
}

function keyFingerprint(key: Buffer): string {
  return createHash("sha256").update("brain-secret-key-id\0").update(key).digest("hex").slice(0, 16);
}

function macUnder(key: Buffer, purpose: string, message: string): Buffer {
  const derived = createHmac("sha256", key).update(`brain-mac\0${purpose}`).digest();
  return createHmac("sha256", derived).update(message, "utf8").digest();
}

/**
 * BRAIN_SECRET_KEY: a key ring, comma-separated, the primary (sealing, signing) first; each key 64
 * hex digits or base64 of 32 bytes. Null when any of them is not a key.
 */
export function parseSecretKeys(text: string): Buffer[] | null {
  const keys = text.split(",").map((k) => parseSecretKey(k));
  return keys.length > 0 && keys.every((k) => k !== null) ? (keys as Buffer[]) : null;
}

/** One key: 64 hex digits, or base64 of 32 bytes. */
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
