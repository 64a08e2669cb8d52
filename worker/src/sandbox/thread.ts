/**
 * The thread that runs one invocation of a component. It starts as a warm spare: it loads the
 * transpiled component and instantiates it at once, then waits for its invocation (posted by the
 * worker when a call is given to it), calls `run` once, reports how it ended, and exits. The
 * worker terminates it at the deadline or when the call ends elsewhere, wherever it is.
 */
import { parentPort, workerData } from "node:worker_threads";
import { Bridge } from "./bridge.js";
import { ownThreadId } from "./cpu.js";
import { sandboxImports } from "./imports.js";
import type { Invoke, RunEnd, ThreadInit } from "./protocol.js";
import { ComponentExit, lineSink } from "./wasi-cli.js";

interface ComponentInstance {
  run(invocation: { input: string; options: string; deadlineAtMs: bigint }): unknown;
}
/** The shape of jco's output with `instantiation: "async"`. */
interface TranspiledComponent {
  instantiate(
    getCoreModule: (name: string) => WebAssembly.Module,
    imports: object,
    instantiateCore: (module: WebAssembly.Module, imports?: object) => Promise<WebAssembly.Instance>,
  ): Promise<ComponentInstance>;
}

/** The linear memories the component's core modules export, to tell an out-of-memory trap. */
const memories: WebAssembly.Memory[] = [];

async function instantiateCore(module: WebAssembly.Module, imports?: object): Promise<WebAssembly.Instance> {
  const instance = await WebAssembly.instantiate(module, imports);
  for (const value of Object.values(instance.exports)) {
    if (value instanceof WebAssembly.Memory) memories.push(value);
  }
  return instance;
}

function describe(error: unknown): { message: string; name: string; stack: string | null } {
  if (error instanceof Error) return { message: error.message, name: error.name, stack: error.stack ?? null };
  return { message: String(error), name: typeof error, stack: null };
}

const init = workerData as ThreadInit;
const bridge = new Bridge(init.port, init.control);
bridge.send({ type: "started", tid: ownThreadId() });
const stdout = lineSink((text) => bridge.send({ type: "output", stream: "stdout", text }));
const stderr = lineSink((text) => bridge.send({ type: "output", stream: "stderr", text }));
let workspaceDir: string | null = null;

async function instantiate(): Promise<ComponentInstance> {
  const { instantiate } = (await import(init.componentUrl)) as TranspiledComponent;
  const imports = sandboxImports(bridge, () => workspaceDir, stdout, stderr);
  return instantiate(
    (name) => {
      const module = init.modules[name];
      if (!module) throw new Error(`the transpiled component asks for an unknown core module ${name}`);
      return module;
    },
    imports,
    instantiateCore,
  );
}

async function run(instance: Promise<ComponentInstance>, invoke: Invoke): Promise<RunEnd> {
  let ready: ComponentInstance;
  try {
    ready = await instance;
  } catch (error) {
    return { how: "setup_failed", message: `instantiating the component failed: ${describe(error).message}` };
  }
  workspaceDir = invoke.workspaceDir;
  try {
    await ready.run({ ...invoke.invocation, deadlineAtMs: BigInt(invoke.invocation.deadlineAtMs) });
    return { how: "returned" };
  } catch (error) {
    if (error instanceof ComponentExit && error.ok) return { how: "returned" };
    const largest = Math.max(0, ...memories.map((m) => m.buffer.byteLength));
    return { how: "trap", ...describe(error), memoryBytes: largest };
  } finally {
    stdout.flush();
    stderr.flush();
  }
}

const instance = instantiate();
instance.catch(() => {}); // reported once the invocation arrives
// The bridge's port stays unstarted (replies are taken synchronously): the invocation comes on
// the thread's own parent port.
const invoke = await new Promise<Invoke>((resolve) => parentPort?.once("message", resolve));
bridge.send({ type: "end", end: await run(instance, invoke) });
init.port.close();
