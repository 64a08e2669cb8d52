import { createHash, timingSafeEqual } from "node:crypto";
import { APP_TOKEN_PREFIX, BrainError } from "@aexhq/brain-contracts";
import type { Sql } from "@aexhq/brain-db/connect";
import { activeAppTokenId } from "@aexhq/brain-db/ops";
import type { FastifyRequest } from "fastify";

/** Who a request of the authenticated API acts for. */
export type Principal = { kind: "operator" } | { kind: "app"; tokenId: string };

declare module "fastify" {
  interface FastifyRequest {
    /** Set by authenticate() on every route of the authenticated API. */
    principal: Principal;
  }
}

const OPERATOR: Principal = { kind: "operator" };

/** Tokens are compared as SHA-256 digests, in constant time. */
export function digest(token: string): Buffer {
  return createHash("sha256").update(token).digest();
}

export function bearer(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== "string") return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match ? match[1]! : null;
}

export function tokenMatches(token: string | null, expected: Buffer): boolean {
  if (token === null) return false;
  return timingSafeEqual(digest(token), expected);
}

/**
 * The authenticated API's onRequest hook: the operator token (compared in constant time) or a live
 * application token (found by its SHA-256; revoked or unknown is `unauthorized`). Application
 * tokens are looked up on every request, not cached: one indexed read, and a revocation
 * committed by any server holds on every server from the next request on.
 */
export function authenticate(operatorDigest: Buffer, sql: Sql) {
  return async (request: FastifyRequest): Promise<void> => {
    const token = bearer(request);
    if (token === null) throw new BrainError("unauthorized");
    const hash = digest(token);
    if (timingSafeEqual(hash, operatorDigest)) {
      request.principal = OPERATOR;
      return;
    }
    const tokenId = token.startsWith(APP_TOKEN_PREFIX) ? await activeAppTokenId(sql, hash) : null;
    if (tokenId === null) throw new BrainError("unauthorized");
    request.principal = { kind: "app", tokenId };
  };
}

/** The owner filter of a principal: undefined for the operator (everything), else its token id. */
export function ownerFilter(principal: Principal): string | undefined {
  return principal.kind === "app" ? principal.tokenId : undefined;
}

/** The owner recorded on what a principal creates: null for the operator. */
export function ownerOf(principal: Principal): string | null {
  return principal.kind === "app" ? principal.tokenId : null;
}
