/**
 * What one component call may take of a worker: its linear memory (capped in its modules, see
 * memory-cap.ts), the JavaScript heap of its thread, and CPU time (see cpu.ts). Limits are on
 * resources, never on time: a call that waits (on a model, on the journal) uses none of them.
 */
import { WASM_PAGE_BYTES } from "./memory-cap.js";

export interface ComponentLimits {
  /** The linear memory of each instance, in bytes (BRAIN_COMPONENT_MEMORY_MB). */
  memoryBytes: number;
  /** CPU time one call's thread may use, in ms; 0: no bound (BRAIN_COMPONENT_CPU_SECONDS). */
  cpuMs: number;
}

/** The default: 256 MiB of linear memory, 300 s of CPU. */
export const DEFAULT_COMPONENT_LIMITS: ComponentLimits = { memoryBytes: 256 * 1024 * 1024, cpuMs: 300_000 };

/** The JavaScript heap of a component's thread: its glue code and bindings, not its own memory. */
export const THREAD_HEAP_LIMITS = { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16 };

/**
 * Whether a trap came with the linear memory at its cap: an allocator that cannot grow traps (or
 * aborts) within one growth step of it, which is the top 1/32 of the cap or 4 MiB, whichever is more.
 */
export function atMemoryCap(usedBytes: number, capBytes: number): boolean {
  return usedBytes >= capBytes - Math.max(capBytes / 32, 4 * 1024 * 1024);
}

export function memoryPages(limits: ComponentLimits): number {
  return Math.floor(limits.memoryBytes / WASM_PAGE_BYTES);
}
