// `npm pack` of the SDK. The contracts package is private, so the SDK's tarball carries the part of
// it the SDK uses: every SDK module imports contracts through dist/contracts.js, which re-exports
// "@aexhq/brain-contracts". `in` (prepack) copies contracts' built modules to dist/vendor and
// points dist/contracts.js (and .d.ts) at that copy; `out` (postpack) points them back, so in this
// repository the SDK and the server share one contracts module. Each file is replaced by a rename,
// so a process loading the SDK meanwhile sees one whole version or the other.
import { cpSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE = '"@aexhq/brain-contracts"';
const VENDORED = '"./vendor/brain-contracts/index.js"';
const dist = join(dirname(fileURLToPath(import.meta.url)), "..", "dist");
const vendor = join(dist, "vendor");
const contractsDist = join(dist, "..", "..", "contracts", "dist");
// The OpenAPI description (contracts/src/openapi) is the server's, and needs zod-openapi: left out.
const SKIP = /(\.map|\.tsbuildinfo|write-json-schema\.(js|d\.ts)|[\\/]openapi([\\/].*)?)$/;

function point(from, to) {
  for (const name of ["contracts.js", "contracts.d.ts"]) {
    const file = join(dist, name);
    const text = readFileSync(file, "utf8");
    if (!text.includes(from)) continue;
    writeFileSync(`${file}.tmp`, text.replace(from, to));
    renameSync(`${file}.tmp`, file);
  }
}

const step = process.argv[2];
if (step === "in") {
  if (!existsSync(join(contractsDist, "index.js"))) throw new Error("build first: contracts/dist is missing");
  const staging = `${vendor}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  cpSync(contractsDist, join(staging, "brain-contracts"), { recursive: true, filter: (src) => !SKIP.test(src) });
  rmSync(vendor, { recursive: true, force: true });
  renameSync(staging, vendor);
  point(PACKAGE, VENDORED);
} else if (step === "out") {
  point(VENDORED, PACKAGE);
  rmSync(vendor, { recursive: true, force: true });
} else {
  throw new Error("usage: vendor-contracts.mjs in|out");
}
