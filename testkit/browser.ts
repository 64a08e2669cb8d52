// A real headless Chromium for tests of the console: Debian's `chromium` package (npm test installs it,
// see scripts/test-needs.mjs), driven by playwright-core, which downloads no browser of its own.
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

export const CHROMIUM_CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser"];

/** CHROMIUM_PATH, else Debian's chromium. Throws (a test fails, never skips) when there is none. */
export function chromiumPath(): string {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) {
    if (!existsSync(configured)) throw new Error(`CHROMIUM_PATH=${configured} does not exist`);
    return configured;
  }
  const found = CHROMIUM_CANDIDATES.find((p) => existsSync(p));
  if (!found) {
    throw new Error(
      `No Chromium found (tried ${CHROMIUM_CANDIDATES.join(", ")}): install it with \`apt-get install -y chromium\` ` +
        "(as npm test does, scripts/test-needs.mjs) or set CHROMIUM_PATH to a Chromium or Chrome executable.",
    );
  }
  return found;
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), headless: true });
}
