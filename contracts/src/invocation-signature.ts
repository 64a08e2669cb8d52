/**
 * Brain's signature on the invocations it POSTs to an application's tool handler (the Application
 * tool extension), so the handler can tell Brain from anyone else. Brain signs, with an Ed25519 key
 * derived from BRAIN_SECRET_KEY, a text naming the signing key, an expiry, the URL it POSTed to
 * (the audience) and the SHA-256 of the body; the header carries all but the body:
 *
 *   brain-signature: v1; kid=<key id>; expires=<epoch ms>; aud=<url, URI-encoded>; sig=<base64url>
 *
 * Brain publishes its public keys as a JWK Set (GET /v1/keys); `verifyInvocation` checks a request
 * against them. A signature is good for INVOCATION_SIGNATURE_TTL_MS and one audience only.
 */
import { createHash, createPublicKey, verify } from "node:crypto";
import { z } from "zod";

export const INVOCATION_SIGNATURE_HEADER = "brain-signature";
/** How long a signed invocation may take to reach its handler. */
export const INVOCATION_SIGNATURE_TTL_MS = 5 * 60_000;
/** Clock skew tolerated between Brain and the handler. */
const SKEW_MS = 60_000;

export const BrainKeySchema = z.object({
  kty: z.literal("OKP"),
  crv: z.literal("Ed25519"),
  x: z.string().min(1),
  kid: z.string().min(1),
  use: z.literal("sig").optional(),
  alg: z.literal("EdDSA").optional(),
});
/** GET /v1/keys: the public keys that verify Brain's invocations (a JWK Set). */
export const BrainKeysSchema = z.object({ keys: z.array(BrainKeySchema) });
export type BrainKey = z.infer<typeof BrainKeySchema>;
export type BrainKeys = z.infer<typeof BrainKeysSchema>;

export interface InvocationSignature {
  kid: string;
  expires: number;
  audience: string;
  signature: string;
}

/** What is signed: the scheme, the key, the expiry, the audience and the body's digest. */
export function signedText(s: Omit<InvocationSignature, "signature">, body: string): Buffer {
  const digest = createHash("sha256").update(body, "utf8").digest("hex");
  return Buffer.from(`brain-invocation-v1\n${s.kid}\n${s.expires}\n${s.audience}\n${digest}`, "utf8");
}

export function formatSignature(s: InvocationSignature): string {
  return `v1; kid=${s.kid}; expires=${s.expires}; aud=${encodeURIComponent(s.audience)}; sig=${s.signature}`;
}

export function parseSignature(header: string): InvocationSignature | null {
  const fields = new Map<string, string>();
  const [version, ...rest] = header.split(";").map((p) => p.trim());
  if (version !== "v1") return null;
  for (const part of rest) {
    const eq = part.indexOf("=");
    if (eq > 0) fields.set(part.slice(0, eq), part.slice(eq + 1));
  }
  const { kid, expires, aud, sig } = Object.fromEntries(fields);
  if (!kid || !expires || !/^\d{1,16}$/.test(expires) || aud === undefined || !sig) return null;
  let audience: string;
  try {
    audience = decodeURIComponent(aud);
  } catch {
    return null;
  }
  return { kid, expires: Number(expires), audience, signature: sig };
}

export type Verdict = { ok: true; audience: string } | { ok: false; reason: string };

/**
 * Whether `body` carries a good signature of one of `keys` in `header`, unexpired at `now`, for an
 * audience `audienceOk` accepts.
 */
export function verifyInvocation(
  keys: readonly BrainKey[],
  header: string | undefined,
  body: string,
  audienceOk: (audience: string) => boolean,
  now = Date.now(),
): Verdict {
  if (header === undefined) return { ok: false, reason: "the invocation is not signed" };
  const s = parseSignature(header);
  if (!s) return { ok: false, reason: "the invocation's signature is malformed" };
  const key = keys.find((k) => k.kid === s.kid);
  if (!key) return { ok: false, reason: `no key ${s.kid} among Brain's keys` };
  if (s.expires + SKEW_MS < now) return { ok: false, reason: "the invocation's signature has expired" };
  if (s.expires - INVOCATION_SIGNATURE_TTL_MS - SKEW_MS > now) {
    return { ok: false, reason: "the invocation's signature is dated in the future" };
  }
  let good = false;
  try {
    const publicKey = createPublicKey({ key: { kty: key.kty, crv: key.crv, x: key.x }, format: "jwk" });
    good = verify(null, signedText(s, body), publicKey, Buffer.from(s.signature, "base64url"));
  } catch {
    good = false;
  }
  if (!good) return { ok: false, reason: "the invocation's signature does not verify" };
  if (!audienceOk(s.audience)) {
    return { ok: false, reason: `the invocation was signed for ${s.audience}, not for this handler` };
  }
  return { ok: true, audience: s.audience };
}
