/**
 * What makes a WebAssembly file a Brain tool component, judged from its bytes and the WIT that jco
 * decodes from them. Shared by the server's admission and the SDK's `brain-tools check`, so a
 * package that passes the check is admitted by the server.
 */

/** WebAssembly binaries start with \0asm and a version; components use layer 1 (`0d 00 01 00`). */
const COMPONENT_HEADER = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];

/** Whether the bytes start like a component (not a core module, not something else). */
export function isComponentBinary(bytes: Uint8Array): boolean {
  return COMPONENT_HEADER.every((byte, i) => bytes[i] === byte);
}

/** Whether a component's decoded WIT exports brain:tool@0.2.0's `run(invocation)`. */
export function exportsToolRun(wit: string): boolean {
  return /export run: func\(invocation: invocation\);/.test(wit) && /brain:tool\/types@0\.2\.0/.test(wit);
}
