// Regenerates contracts/json-schema/*.json and contracts/openapi.json from the zod definitions
// (npm run schemas).
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { renderOpenApi } from "./openapi/index.js";
import { renderJsonSchema, wireSchemas } from "./wire-schemas.js";

const out = join(dirname(fileURLToPath(import.meta.url)), "..", "json-schema");
mkdirSync(out, { recursive: true });
for (const [name, schema] of Object.entries(wireSchemas)) {
  writeFileSync(join(out, `${name}.json`), renderJsonSchema(schema));
}
console.log(`wrote ${Object.keys(wireSchemas).length} schemas to ${out}`);
const openapi = join(out, "..", "openapi.json");
writeFileSync(openapi, renderOpenApi());
console.log(`wrote ${openapi}`);
