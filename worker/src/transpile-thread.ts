/**
 * Transpiles one component with jco, in a thread of its own: jco's work is seconds of synchronous
 * CPU, which would otherwise stall the worker's heartbeats and every running call's host calls.
 * Writes the JS and core modules to `outDir` and reports the component's imports and exports.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { parentPort, workerData } from "node:worker_threads";
import { transpile } from "@bytecodealliance/jco";

export interface TranspileRequest {
  bytes: Uint8Array;
  outDir: string;
}

export interface TranspileResult {
  imports: string[];
  exports: string[];
  files: string[];
}

const { bytes, outDir } = workerData as TranspileRequest;
const out = await transpile(bytes, {
  name: "component",
  // The worker supplies every import itself (its sandbox), so nothing is bound to a WASI shim.
  instantiation: "async",
  noTypescript: true,
  quiet: true,
});
const files: string[] = [];
for (const [name, content] of Object.entries(out.files)) {
  if (!name.endsWith(".js") && !name.endsWith(".wasm")) continue;
  await mkdir(dirname(join(outDir, name)), { recursive: true });
  await writeFile(join(outDir, name), content);
  files.push(name);
}
const result: TranspileResult = { imports: out.imports, exports: out.exports.map(([name]) => name), files };
parentPort?.postMessage(result);
