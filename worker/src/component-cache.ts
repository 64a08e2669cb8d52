/**
 * Components by content hash: transpiled by jco once per hash and kept on disk (shared by every
 * worker process using the same cache directory, and across restarts), their core modules compiled
 * once per process and kept in memory, so a warm invocation only instantiates. Concurrent first
 * uses of one hash share one load; a failed load is not kept, so the next invocation tries again.
 */
import { createHash, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { Sql } from "@aexhq/brain-db/connect";
import { componentBytes } from "@aexhq/brain-db/ops";
import { capMemories } from "./sandbox/memory-cap.js";
import type { TranspileRequest, TranspileResult } from "./transpile-thread.js";

export interface LoadedComponent {
  sha256: string;
  /** file: URL of the transpiled JS. */
  componentUrl: string;
  modules: Record<string, WebAssembly.Module>;
  imports: string[];
  exports: string[];
  /** Whether this load transpiled it (a cold start) or found it on disk. */
  transpiled: boolean;
}

/** A setup problem with the component itself: reported as `setup_failed`, never retried. */
export class ComponentLoadError extends Error {}

/** A component that needs more memory to start than the worker's limit: `memory_exceeded`. */
export class ComponentMemoryError extends ComponentLoadError {}

/** Compiled components kept in memory (each holds its machine code): least recently used go first. */
const MEMORY_ENTRIES = 8;

function jcoVersion(): string {
  const require = createRequire(import.meta.url);
  const entry = require.resolve("@bytecodealliance/jco");
  return (require(join(dirname(entry), "..", "package.json")) as { version: string }).version;
}

export class ComponentCache {
  private readonly memory = new Map<string, Promise<LoadedComponent>>();
  /** Transpiler output changes with jco's version: each version has a directory of its own. */
  private readonly dir: string;

  constructor(
    private readonly sql: Sql,
    cacheDir: string,
    /** Every memory a component's modules define is capped at this many 64 KiB pages. */
    private readonly memoryPages: number,
  ) {
    this.dir = join(cacheDir, `jco-${jcoVersion()}`);
  }

  load(sha256: string): Promise<LoadedComponent> {
    const hit = this.memory.get(sha256);
    if (hit) {
      this.memory.delete(sha256);
      this.memory.set(sha256, hit);
      return hit.then((c) => ({ ...c, transpiled: false }));
    }
    const loading = this.loadUncached(sha256);
    this.memory.set(sha256, loading);
    loading.catch(() => {
      if (this.memory.get(sha256) === loading) this.memory.delete(sha256);
    });
    while (this.memory.size > MEMORY_ENTRIES) this.memory.delete(this.memory.keys().next().value as string);
    return loading;
  }

  private async loadUncached(sha256: string): Promise<LoadedComponent> {
    const dir = join(this.dir, sha256);
    let transpiled = false;
    if (!existsSync(join(dir, "meta.json"))) {
      await this.transpileToDisk(sha256, dir);
      transpiled = true;
    }
    const meta = JSON.parse(await readFile(join(dir, "meta.json"), "utf8")) as TranspileResult;
    const modules: Record<string, WebAssembly.Module> = {};
    for (const file of meta.files.filter((f) => f.endsWith(".wasm"))) {
      let capped: Uint8Array;
      try {
        capped = capMemories(await readFile(join(dir, file)), this.memoryPages);
      } catch (error) {
        throw new ComponentMemoryError((error as Error).message);
      }
      modules[file] = await WebAssembly.compile(capped);
    }
    return {
      sha256,
      componentUrl: pathToFileURL(join(dir, "component.js")).href,
      modules,
      imports: meta.imports,
      exports: meta.exports,
      transpiled,
    };
  }

  /** Writes to a private directory, then renames it into place: a reader never sees half of it. */
  private async transpileToDisk(sha256: string, dir: string): Promise<void> {
    const bytes = await componentBytes(this.sql, sha256);
    if (!bytes) throw new ComponentLoadError(`component ${sha256} has not been uploaded`);
    if (createHash("sha256").update(bytes).digest("hex") !== sha256) {
      throw new ComponentLoadError(`component ${sha256}: the stored bytes do not match their digest`);
    }
    const staging = join(this.dir, `.staging-${randomUUID()}`);
    await mkdir(staging, { recursive: true });
    try {
      const result = await transpileInThread({ bytes: new Uint8Array(bytes), outDir: staging });
      await writeFile(join(staging, "meta.json"), JSON.stringify(result));
      await rename(staging, dir).catch(async (error: NodeJS.ErrnoException) => {
        // Another worker sharing the cache got there first: its copy is as good as ours.
        if (error.code !== "ENOTEMPTY" && error.code !== "EEXIST") throw error;
      });
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }
}

function transpileInThread(request: TranspileRequest): Promise<TranspileResult> {
  return new Promise((resolve, reject) => {
    const thread = new Worker(new URL("./transpile-thread.js", import.meta.url), { workerData: request });
    let result: TranspileResult | null = null;
    thread.once("message", (message: TranspileResult) => {
      result = message;
    });
    thread.once("error", (error) => reject(new ComponentLoadError(`jco could not transpile it: ${error.message}`)));
    thread.once("exit", () => {
      if (result) resolve(result);
      else reject(new ComponentLoadError("jco could not transpile it: its thread exited without a result"));
    });
  });
}
