import { createHash, timingSafeEqual } from "node:crypto";
import { BrainError } from "@aexhq/brain-contracts";
import type { FastifyRequest } from "fastify";

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

/** A preHandler for operator routes. */
export function requireOperator(expected: Buffer) {
  return async (request: FastifyRequest): Promise<void> => {
    if (!tokenMatches(bearer(request), expected)) throw new BrainError("unauthorized");
  };
}
