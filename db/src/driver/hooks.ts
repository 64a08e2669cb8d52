// Module loader hooks (node:module register) that apply patch.ts's edits to postgres.js as it loads.
import { isDriverModule, patchDriverSource } from "./patch.js";

interface LoadResult {
  format?: string | null;
  source?: string | ArrayBuffer | ArrayBufferView | null;
  shortCircuit?: boolean;
}
type NextLoad = (url: string, context?: unknown) => Promise<LoadResult>;

export async function load(url: string, context: unknown, nextLoad: NextLoad): Promise<LoadResult> {
  const result = await nextLoad(url, context);
  if (!isDriverModule(url) || result.source == null) return result;
  const source =
    typeof result.source === "string" ? result.source : new TextDecoder().decode(result.source as Uint8Array);
  const patched = patchDriverSource(url, source);
  return patched === null ? result : { ...result, source: patched, shortCircuit: true };
}
