import { describe, expect, it } from "vitest";
import { socketOf } from "../../src/connect-url.js";

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
