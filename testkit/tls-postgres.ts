import { execFileSync } from "node:child_process";
import { chownSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres } from "@aexhq/brain-db/embedded";
import postgres from "postgres";

/**
 * A Postgres cluster of a test's own that speaks TLS with a certificate signed by a CA made here
 * (openssl), for 127.0.0.1; and a second CA that signed nothing, to show verification refusing.
 */
export interface TlsPostgres {
  /** A superuser URL (no TLS parameters). */
  url: string;
  port: number;
  /** The CA file that signed the server's certificate. */
  caFile: string;
  /** A CA file that did not. */
  otherCaFile: string;
  admin: postgres.Sql;
  destroy(): Promise<void>;
}

function openssl(args: string[], cwd: string): void {
  execFileSync("openssl", args, { cwd, stdio: "pipe" });
}

/** A CA, and a server key and certificate for IP 127.0.0.1 signed by it, in `dir`. */
function makeCertificates(dir: string): void {
  const days = ["-days", "2"];
  openssl(
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      "ca.key",
      "-out",
      "ca.pem",
      ...days,
      "-subj",
      "/CN=test-ca",
    ],
    dir,
  );
  openssl(
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      "other.key",
      "-out",
      "other.pem",
      ...days,
      "-subj",
      "/CN=other-ca",
    ],
    dir,
  );
  openssl(
    ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"],
    dir,
  );
  writeFileSync(join(dir, "san.ext"), "subjectAltName = IP:127.0.0.1\n");
  openssl(
    [
      "x509",
      "-req",
      "-in",
      "server.csr",
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "server.crt",
      ...days,
      "-extfile",
      "san.ext",
    ],
    dir,
  );
}

export async function startTlsPostgres(): Promise<TlsPostgres> {
  const dir = mkdtempSync(join(tmpdir(), "brain-pg-tls-"));
  const dataDir = join(dir, "data");
  const certs = join(dir, "certs");
  execFileSync("mkdir", ["-p", certs]);
  makeCertificates(certs);
  const pg = await startEmbeddedPostgres({ dataDir });
  // Postgres reads the key as the user it runs as, and refuses a key others may read.
  const owner = statSync(dataDir);
  for (const file of ["server.key", "server.crt"]) {
    execFileSync("cp", [join(certs, file), join(dataDir, file)]);
    chownSync(join(dataDir, file), owner.uid, owner.gid);
    execFileSync("chmod", ["0600", join(dataDir, file)]);
  }
  const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
  await admin`ALTER SYSTEM SET ssl = on`;
  await admin`SELECT pg_reload_conf()`;
  return {
    url: pg.url,
    port: pg.port,
    caFile: join(certs, "ca.pem"),
    otherCaFile: join(certs, "other.pem"),
    admin,
    async destroy() {
      await admin.end({ timeout: 1 }).catch(() => {});
      await pg.stop("fast");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
