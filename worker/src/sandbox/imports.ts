/**
 * Everything a component may import, keyed as jco's instantiation mode asks for it (interface
 * names without versions: any wasi 0.2.x). A component that imports anything else (wasi:http,
 * wasi:sockets, ...) is refused before it runs, naming what is missing.
 */
import type { Bridge } from "./bridge.js";
import { hostImports } from "./host-imports.js";
import { cliImports, clockAndRandomImports } from "./wasi-cli.js";
import { filesystemImports } from "./wasi-filesystem.js";
import { type ByteSink, error, poll, streams } from "./wasi-io.js";

export function sandboxImports(
  bridge: Bridge | null,
  workspaceDir: () => string | null,
  stdout: ByteSink,
  stderr: ByteSink,
) {
  return {
    "wasi:io/error": error,
    "wasi:io/poll": poll,
    "wasi:io/streams": streams,
    ...cliImports(stdout, stderr),
    ...clockAndRandomImports(),
    ...filesystemImports(workspaceDir),
    // Interfaces of types only: nothing to provide, but importing them is fine.
    "brain:tool/types": {},
    ...(bridge ? hostImports(bridge) : { "brain:tool/host": {} }),
  };
}

const discard: ByteSink = { write() {} };

/** The interface names above, for checking a component's imports before running it. */
export const SUPPORTED_INTERFACES: ReadonlySet<string> = new Set(
  Object.keys(sandboxImports(null, () => null, discard, discard)),
);

/** A component's imports this worker does not provide, e.g. ["wasi:http/types"]. */
export function unsupportedImports(imports: readonly string[]): string[] {
  return imports.map((name) => name.replace(/@[^/]*$/, "")).filter((name) => !SUPPORTED_INTERFACES.has(name));
}
