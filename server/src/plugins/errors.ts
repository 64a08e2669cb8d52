import { BrainError, ERROR_CODES, type ErrorCode, issueDetail } from "@aexhq/brain-contracts";
import { type DatabaseAvailability, isConnectionError, isDataException } from "@aexhq/brain-db/connect";
import { lostToAnother } from "@aexhq/brain-db/writer";
import type { FastifyError, FastifyInstance, FastifyRequest } from "fastify";
import { ZodError } from "zod";

/** Maps every failure to `{ error: { code, message, details? } }` with a documented code. */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | BrainError | ZodError, request, reply) => {
    if (app.hasDecorator("brain")) observeRequestError(app.brain.availability, request, error);
    const brain = toBrainError(error);
    if (brain.code === "internal_error") request.log.error({ err: error }, "unhandled error");
    void reply.status(brain.httpStatus).send({ error: brain.toJSON() });
  });
  app.setNotFoundHandler((_request, reply) => {
    void reply.status(404).send({ error: new BrainError("not_found").toJSON() });
  });
}

/**
 * A connection failure seen by a request is news of an outage: requests after it fail fast. A
 * socket error of a client that went away (an upload it aborted, say) is the client's own: taken
 * for the database's, any tenant could make every request fail database_unavailable.
 */
export function observeRequestError(
  availability: Pick<DatabaseAvailability, "observe">,
  request: FastifyRequest,
  error: unknown,
): void {
  const clientGone = request.raw.destroyed || request.raw.socket?.destroyed === true;
  if (!clientGone) availability.observe(error);
}

export function toBrainError(error: unknown): BrainError {
  if (error instanceof BrainError) return error;
  if (isConnectionError(error)) return new BrainError("database_unavailable");
  // A transaction that lost a deadlock or a serialization conflict was rolled back whole: on one
  // Postgres rare, on a Citus cluster its distributed deadlock detection's cancel under load.
  if (lostToAnother(error)) return new BrainError("write_conflict");
  if (error instanceof ZodError) {
    return new BrainError("invalid_request", undefined, error.issues.map(issueDetail));
  }
  // Anything can be thrown, null included: read its fields only if it is an object.
  const e = (typeof error === "object" && error !== null ? error : {}) as FastifyError;
  // Postgres data exceptions (SQLSTATE class 22: a NUL character, an invalid escape, a value out
  // of range) come from input that passed the schema but cannot be stored: nothing was written.
  if (isDataException(error)) {
    return new BrainError("invalid_request", "The input contains text or numbers Postgres cannot store.");
  }
  switch (e.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new BrainError("body_too_large");
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new BrainError("unsupported_media_type");
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return new BrainError("invalid_request", "The body is not valid JSON.");
  }
  if (e.statusCode === 400 || (e instanceof SyntaxError && e.statusCode !== undefined)) {
    return new BrainError("invalid_request", e.message);
  }
  if (e.statusCode === 413) return new BrainError("body_too_large");
  if (e.statusCode === 415) return new BrainError("unsupported_media_type");
  return new BrainError("internal_error");
}

export function httpStatusOf(code: ErrorCode): number {
  return ERROR_CODES[code].http;
}
