// Every failure a route meets becomes one documented error code: the mapping the error handler
// applies, tested without a server or a database (the errors are built as their sources raise them).
import { BrainError } from "@aexhq/brain-contracts";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { toBrainError } from "../../src/plugins/errors.js";

const fastify = (code: string, statusCode: number, message = "fastify says") =>
  Object.assign(new Error(message), { code, statusCode });

describe("toBrainError", () => {
  it("passes a BrainError through unchanged", () => {
    const error = new BrainError("not_found");
    expect(toBrainError(error)).toBe(error);
  });

  it("answers a lost database as database_unavailable (503), not a crash", () => {
    for (const code of ["CONNECTION_CLOSED", "57P01", "ECONNREFUSED"]) {
      const mapped = toBrainError(Object.assign(new Error("gone"), { code }));
      expect([mapped.code, mapped.httpStatus]).toEqual(["database_unavailable", 503]);
    }
  });

  it("answers a Citus worker lost mid-transaction (XX000, its message) as database_unavailable; other XX000 stay internal", () => {
    const lost = {
      code: "XX000",
      severity: "ERROR",
      message: "failure on connection marked as essential: 127.0.0.1:42813",
    };
    expect(toBrainError(lost).code).toBe("database_unavailable");
    expect(toBrainError({ code: "XX000", severity: "ERROR", message: "cache lookup failed" }).code).toBe(
      "internal_error",
    );
  });

  it("answers a transaction that lost a deadlock or a serialization conflict as write_conflict (503)", () => {
    for (const code of ["40P01", "40001"]) {
      const mapped = toBrainError({ code, severity: "ERROR", message: "canceling the transaction" });
      expect([mapped.code, mapped.httpStatus]).toEqual(["write_conflict", 503]);
    }
  });

  it("answers a schema failure as invalid_request with each issue's dotted path", () => {
    const error = z.object({ tools: z.array(z.object({ name: z.string() })) }).safeParse({ tools: [{ name: 1 }] })
      .error!;
    const mapped = toBrainError(error);
    expect(mapped.code).toBe("invalid_request");
    expect(mapped.details).toEqual([{ path: "tools.0.name", message: expect.any(String), code: "invalid_type" }]);
  });

  it("answers input Postgres cannot store (SQLSTATE class 22) as invalid_request", () => {
    const mapped = toBrainError({ code: "22P05", severity: "ERROR", message: "unsupported Unicode escape" });
    expect([mapped.code, mapped.httpStatus]).toEqual(["invalid_request", 400]);
  });

  it("maps the body parser's refusals to their documented codes", () => {
    expect(toBrainError(fastify("FST_ERR_CTP_BODY_TOO_LARGE", 413)).code).toBe("body_too_large");
    expect(toBrainError(fastify("FST_ERR_CTP_INVALID_MEDIA_TYPE", 415)).code).toBe("unsupported_media_type");
    expect(toBrainError(fastify("FST_ERR_CTP_INVALID_JSON_BODY", 400)).message).toBe("The body is not valid JSON.");
    expect(toBrainError(fastify("FST_ERR_CTP_EMPTY_JSON_BODY", 400)).code).toBe("invalid_request");
    expect(toBrainError(fastify("FST_ERR_OTHER", 400, "bad query")).message).toBe("bad query");
    expect(toBrainError(fastify("FST_ERR_OTHER", 413)).code).toBe("body_too_large");
    expect(toBrainError(fastify("FST_ERR_OTHER", 415)).code).toBe("unsupported_media_type");
  });

  it("answers anything else as internal_error, without the error's own message", () => {
    for (const error of [new Error("secret detail"), new TypeError("x is undefined"), "thrown string", null]) {
      const mapped = toBrainError(error);
      expect([mapped.code, mapped.httpStatus]).toEqual(["internal_error", 500]);
      expect(mapped.message).not.toContain("secret");
    }
    // A unique violation is a bug of ours, not the caller's input.
    expect(toBrainError({ code: "23505", severity: "ERROR", message: "duplicate key" }).code).toBe("internal_error");
  });
});
