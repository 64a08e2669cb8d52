// The slice of the WebAssembly JS API the worker uses. Node has it at run time; TypeScript ships
// its types only in the DOM libs, which would bring in a browser's globals.
declare namespace WebAssembly {
  class Module {
    private readonly brand: "WebAssembly.Module";
  }
  class Memory {
    readonly buffer: ArrayBuffer;
  }
  class Instance {
    readonly exports: Record<string, unknown>;
  }
  function compile(bytes: Uint8Array): Promise<Module>;
  function instantiate(module: Module, imports?: object): Promise<Instance>;
}
