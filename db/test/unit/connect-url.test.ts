import { describe, expect, it } from "vitest";
import { databaseHosts, databaseUrlProblem, socketOf, tlsOf, withoutAnyServer } from "../../src/connect-url.js";
import { meaningOf } from "../../src/ops/durability.js";

describe("socketOf: libpq's ?host=/dir names a Unix socket", () => {
  it("turns a socket directory into postgres.js's path, without the parameter", () => {
    expect(socketOf("postgres://u@localhost:5437/db?host=/run/postgresql")).toEqual({
      url: "postgres://u@localhost:5437/db",
      path: "/run/postgresql/.s.PGSQL.5437",
    });
    expect(socketOf("postgres://u@localhost/db?host=/tmp/&sslmode=disable")).toEqual({
      url: "postgres://u@localhost/db?sslmode=disable",
      path: "/tmp/.s.PGSQL.5432",
    });
    // libpq also takes the port as a parameter.
    expect(socketOf("postgres://u@x/db?host=/s&port=6000").path).toBe("/s/.s.PGSQL.6000");
  });

  it("leaves every other URL alone", () => {
    for (const url of ["postgres://u@db.example:5432/x", "postgres://u@h/x?host=db.example", "not a url"]) {
      expect(socketOf(url)).toEqual({ url });
    }
  });
});

describe("databaseUrlProblem: the URLs libpq and the driver take", () => {
  it("takes several hosts for fail-over, sockets and TLS parameters", () => {
    for (const url of [
      "postgres://u:p@db:5432/x",
      "postgresql://u@h1:5432,h2:5433/x?target_session_attrs=read-write",
      "postgres://u@[::1]:5432,10.0.0.2/x",
      "postgres://u@/x?host=/run/postgresql",
      "postgres:///x",
      "postgres://u@db/x?sslmode=verify-full&sslrootcert=/etc/ca.pem",
    ]) {
      expect([url, databaseUrlProblem(url)]).toEqual([url, null]);
    }
  });

  it("refuses what is not one, naming why", () => {
    expect(databaseUrlProblem("not a url")).toBe("a postgres:// URL");
    expect(databaseUrlProblem("http://db/x")).toBe("a postgres:// URL");
    expect(databaseUrlProblem("postgres://u@h1:99999/x")).toBe('an invalid port in "h1:99999"');
    expect(databaseUrlProblem("postgres://u@h1,,h2/x")).toBe('an invalid host ""');
    expect(databaseUrlProblem("postgres://u@h/x?target_session_attrs=write")).toBe(
      "target_session_attrs=write is not supported",
    );
    expect(databaseUrlProblem("postgres://u@h/x?sslmode=sure")).toMatch(/^sslmode=sure is not one of disable, /);
  });

  it("names the hosts without credentials", () => {
    expect(databaseHosts("postgres://u:secret@h1,h2:6000/x?a=b")).toEqual(["h1:5432", "h2:6000"]);
  });
});

describe("withoutAnyServer: target_session_attrs=any, which the driver does not know", () => {
  it("drops the parameter wherever it stands, and leaves the others", () => {
    expect(withoutAnyServer("postgres://u@h/db?target_session_attrs=any")).toBe("postgres://u@h/db");
    expect(withoutAnyServer("postgres://u@h/db?target_session_attrs=any&sslmode=require")).toBe(
      "postgres://u@h/db?sslmode=require",
    );
    expect(withoutAnyServer("postgres://u@h/db?sslmode=require&target_session_attrs=any")).toBe(
      "postgres://u@h/db?sslmode=require",
    );
    expect(withoutAnyServer("postgres://u@h/db?target_session_attrs=read-write")).toBe(
      "postgres://u@h/db?target_session_attrs=read-write",
    );
  });
});

describe("tlsOf: libpq's sslmode and sslrootcert", () => {
  const read = (path: string) => `CA from ${path}`;
  it("checks the certificate against the CA file, and the name with verify-full", () => {
    expect(tlsOf("postgres://u@h/x?sslmode=verify-full&sslrootcert=/ca.pem&application_name=a", read)).toEqual({
      url: "postgres://u@h/x?application_name=a",
      ssl: { ca: "CA from /ca.pem", rejectUnauthorized: true, verifyName: true },
    });
    expect(tlsOf("postgres://u@h/x?sslmode=verify-ca&sslrootcert=/ca.pem", read).ssl).toEqual({
      ca: "CA from /ca.pem",
      rejectUnauthorized: true,
      verifyName: false,
    });
    // sslrootcert alone is verify-full; "system" is the system's CAs.
    expect(tlsOf("postgres://u@h/x?sslrootcert=system", read)).toEqual({
      url: "postgres://u@h/x",
      ssl: { rejectUnauthorized: true, verifyName: true },
    });
  });

  it("passes libpq's unchecked modes on, and leaves a URL without TLS alone", () => {
    expect(tlsOf("postgres://u@h1,h2/x?sslmode=require", read)).toEqual({
      url: "postgres://u@h1,h2/x",
      ssl: "require",
    });
    expect(tlsOf("postgres://u@h/x?sslmode=disable", read)).toEqual({ url: "postgres://u@h/x", ssl: false });
    expect(tlsOf("postgres://u@h/x?application_name=a", read)).toEqual({ url: "postgres://u@h/x?application_name=a" });
  });
});

describe("meaningOf: what an acknowledgment is worth", () => {
  it("follows synchronous_commit and synchronous_standby_names", () => {
    expect(meaningOf("off", "s1")).toMatch(/can be lost if Postgres crashes/);
    expect(meaningOf("on", "")).toMatch(/a fail-over to an asynchronous standby can lose the latest ones$/);
    expect(meaningOf("local", "s1")).toMatch(/a fail-over to an asynchronous standby/);
    expect(meaningOf("remote_write", "s1")).toMatch(/unless a synchronous standby's OS crashes with it$/);
    expect(meaningOf("on", "FIRST 1 (s1, s2)")).toMatch(/a synchronous standby \(FIRST 1 \(s1, s2\)\) has it on disk$/);
  });
});
