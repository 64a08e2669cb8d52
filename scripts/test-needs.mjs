// What `npm test` needs from the machine beyond npm ci, brought by the test command itself so
// that `npm ci && npm test` passes on a fresh machine: Debian's Chromium, for the console's browser
// test (playwright-core downloads no browser). Installed only when neither CHROMIUM_PATH nor a
// known path has one, with apt-get (as root, or through sudo); otherwise it says what to do.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser"];

function present() {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) return existsSync(configured);
  return CANDIDATES.some((path) => existsSync(path));
}

function run(command, args) {
  const result = spawnSync(command, args, {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  return result.status === 0;
}

if (!present()) {
  const root = process.getuid?.() === 0;
  const as = root ? [] : ["sudo", "-n", "-E"];
  const apt = (...args) => (as.length ? run(as[0], [...as.slice(1), "apt-get", ...args]) : run("apt-get", args));
  process.stderr.write("test-needs: Chromium is missing; installing Debian's chromium (the console's browser test)\n");
  const installed = existsSync("/usr/bin/apt-get") && apt("update", "-qq") && apt("install", "-y", "-qq", "chromium");
  if (!installed || !present()) {
    process.stderr.write(
      "test-needs: could not install Chromium: run `apt-get install -y chromium`, or set CHROMIUM_PATH; the console test will fail without it\n",
    );
  }
}
