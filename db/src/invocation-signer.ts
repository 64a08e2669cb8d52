/**
 * Signs the invocations Brain POSTs to applications' tool handlers (see the contract in
 * contracts/src/invocation-signature.ts). The Ed25519 keys are derived from the BRAIN_SECRET_KEY
 * ring, so every server and worker holding the ring signs alike with nothing stored: the primary
 * key's signs, and every key of the ring is published, so handlers keep verifying what was signed
 * just before a rotation.
 */
import { createHash, createPrivateKey, createPublicKey, type KeyObject, sign } from "node:crypto";
import {
  type BrainKey,
  type BrainKeys,
  formatSignature,
  INVOCATION_SIGNATURE_TTL_MS,
  signedText,
} from "@aexhq/brain-contracts";
import type { SecretBox } from "./secrets.js";

/** PKCS#8 DER of an Ed25519 private key, up to its 32-byte seed. */
const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  jwk: BrainKey;
}

export class InvocationSigner {
  readonly #keys: SigningKey[];

  constructor(box: SecretBox) {
    this.#keys = box.derive("brain-invocation-signing-v1").map(({ bytes }) => signingKey(bytes));
  }

  /** The `brain-signature` header for `body` POSTed to `audience`. */
  sign(body: string, audience: string, now = Date.now()): string {
    const key = this.#keys[0]!;
    const unsigned = { kid: key.kid, expires: now + INVOCATION_SIGNATURE_TTL_MS, audience };
    const signature = sign(null, signedText(unsigned, body), key.privateKey).toString("base64url");
    return formatSignature({ ...unsigned, signature });
  }

  /** The public keys, as GET /v1/keys serves them. */
  keys(): BrainKeys {
    return { keys: this.#keys.map((k) => k.jwk) };
  }
}

function signingKey(seed: Buffer): SigningKey {
  const privateKey = createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]),
    format: "der",
    type: "pkcs8",
  });
  const { x } = createPublicKey(privateKey).export({ format: "jwk" }) as { x: string };
  const kid = createHash("sha256").update(x).digest("base64url").slice(0, 16);
  return { kid, privateKey, jwk: { kty: "OKP", crv: "Ed25519", x, kid, use: "sig", alg: "EdDSA" } };
}
