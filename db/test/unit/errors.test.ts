// How a failed database call is read: a data exception (SQLSTATE class 22) is the input's fault
// and answered as such; a connection failure is an outage. Told apart by the server's SQLSTATE,
// never by message text. Also the driver's reconnect backoff.
import { describe, expect, it } from "vitest";
import { isConnectionError } from "../../src/availability.js";
import { MAX_RECONNECT_DELAY_S, reconnectDelaySeconds } from "../../src/connect-url.js";
import { isDataException } from "../../src/errors.js";

const server = (code: string) => ({ code, severity: "ERROR", message: "from Postgres" });

describe("isDataException", () => {
  it("is true for a server error of SQLSTATE class 22 (NUL, bad escape, out of range)", () => {
    for (const code of ["22021", "22P05", "22003", "22025", "2200C"]) expect(isDataException(server(code))).toBe(true);
  });

  it("is false for other classes, for driver and Node errors reusing `code`, and for non-errors", () => {
    for (const code of ["23505", "40001", "08006", "57P01", "2202", "220031"]) {
      expect(isDataException(server(code)), code).toBe(false);
    }
    expect(isDataException({ code: "22021" })).toBe(false); // no severity: not the server's
    for (const value of [null, undefined, "22021", 22021, new Error("22021")])
      expect(isDataException(value)).toBe(false);
  });
});

describe("isConnectionError", () => {
  it("is true for lost connections, shutdowns, refused sockets and too many connections", () => {
    for (const code of [
      "CONNECTION_CLOSED",
      "CONNECTION_ENDED",
      "CONNECT_TIMEOUT",
      "08006",
      "57P01",
      "57P02",
      "57P03",
      "53300",
      "ECONNREFUSED",
      "ECONNRESET",
    ]) {
      expect(isConnectionError({ code }), code).toBe(true);
    }
  });

  it("is false for errors of a query's own making", () => {
    for (const code of ["22021", "23505", "40001", "42P01", "ENOENT"])
      expect(isConnectionError({ code }), code).toBe(false);
    expect(isConnectionError(new Error("ECONNRESET"))).toBe(false);
    expect(isConnectionError(null)).toBe(false);
  });
});

describe("reconnectDelaySeconds", () => {
  it("doubles from 25-50 ms and never waits longer than the cap", () => {
    expect(reconnectDelaySeconds(0, () => 0)).toBeCloseTo(0.025);
    expect(reconnectDelaySeconds(0, () => 1)).toBeCloseTo(0.05);
    expect(reconnectDelaySeconds(3, () => 1)).toBeCloseTo(0.4);
    for (let retries = 0; retries < 64; retries++) {
      expect(reconnectDelaySeconds(retries, () => 0.999)).toBeLessThanOrEqual(MAX_RECONNECT_DELAY_S);
    }
    expect(reconnectDelaySeconds(40, () => 0)).toBe(MAX_RECONNECT_DELAY_S / 2);
  });
});
