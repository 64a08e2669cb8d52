// What `npm test` needs from the machine beyond npm ci, brought by the test command itself so
// that `npm ci && npm test` passes on a fresh machine: Debian's Chromium, for the console's browser
// test (playwright-core downloads no browser), openssl, which makes the certificates of the TLS
// test's CA, and PgBouncer, for the pooler leg of test:matrix. Each is installed only when missing,
// with apt-get (as root, or through sudo); otherwise it says what to do.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const NEEDS = [
  {
    what: "Chromium (the console's browser test)",
    pkg: "chromium",
    present() {
      const configured = process.env.CHROMIUM_PATH;
      if (configured) return existsSync(configured);
      return ["/usr/bin/chromium", "/usr/bin/chromium-browser"].some((path) => existsSync(path));
    },
    otherwise: "run `apt-get install -y chromium`, or set CHROMIUM_PATH",
  },
  {
    what: "PgBouncer (the pooler leg of test:matrix)",
    pkg: "pgbouncer",
    present: () => ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].some((path) => existsSync(path)),
    otherwise: "run `apt-get install -y pgbouncer`",
  },
  {
    what: "openssl (the TLS test's certificates)",
    pkg: "openssl",
    present: () => spawnSync("openssl", ["version"], { stdio: "ignore" }).status === 0,
    otherwise: "run `apt-get install -y openssl`",
  },
];

function run(command, args) {
  const result = spawnSync(command, args, {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  return result.status === 0;
}

const missing = NEEDS.filter((need) => !need.present());
if (missing.length > 0) {
  const root = process.getuid?.() === 0;
  const as = root ? [] : ["sudo", "-n", "-E"];
  const apt = (...args) => (as.length ? run(as[0], [...as.slice(1), "apt-get", ...args]) : run("apt-get", args));
  const names = missing.map((need) => need.pkg);
  process.stderr.write(
    `test-needs: missing ${missing.map((need) => need.what).join(", ")}; installing ${names.join(" ")}\n`,
  );
  if (existsSync("/usr/bin/apt-get")) {
    if (apt("update", "-qq")) apt("install", "-y", "-qq", ...names);
  }
  for (const need of missing) {
    if (!need.present()) process.stderr.write(`test-needs: could not install ${need.pkg}: ${need.otherwise}\n`);
  }
}
