/**
 * A ceiling on a component's linear memory. The worker compiles each core module of a transpiled
 * component itself, so it writes the ceiling into the module's memory section before compiling:
 * every memory the module defines gets a maximum of at most `maxPages` (64 KiB each), and a
 * `memory.grow` past it fails inside the component as it would on a machine out of memory.
 * Memories it imports are defined (and so capped) by another module. V8's heap limits (a thread's
 * resourceLimits) do not reach linear memory: this is what bounds it.
 */

export const WASM_PAGE_BYTES = 64 * 1024;

const MAGIC = [0x00, 0x61, 0x73, 0x6d];
const MEMORY_SECTION = 5;

/**
 * The module's bytes with every memory it defines capped at `maxPages`; throws if one needs more
 * to start. Only the memory section is rewritten; every other section is the same bytes.
 */
export function capMemories(bytes: Uint8Array, maxPages: number): Uint8Array {
  if (bytes.length < 8 || MAGIC.some((b, i) => bytes[i] !== b)) throw new Error("not a WebAssembly module");
  const parts: Uint8Array[] = [bytes.subarray(0, 8)];
  let at = 8;
  while (at < bytes.length) {
    const id = bytes[at]!;
    const [size, sizeEnd] = readU32(bytes, at + 1);
    if (sizeEnd + size > bytes.length) throw new Error("a section runs past the end of the module");
    if (id === MEMORY_SECTION) {
      const capped = capSection(bytes.subarray(sizeEnd, sizeEnd + size), maxPages);
      parts.push(Uint8Array.from([id, ...writeU32(capped.length), ...capped]));
    } else {
      parts.push(bytes.subarray(at, sizeEnd + size));
    }
    at = sizeEnd + size;
  }
  return Buffer.concat(parts);
}

function capSection(body: Uint8Array, maxPages: number): number[] {
  const [count, countEnd] = readU32(body, 0);
  const out = [...writeU32(count)];
  let at = countEnd;
  for (let i = 0; i < count; i++) {
    const flags = body[at]!;
    // 0x00: min; 0x01: min and max; 0x03: shared, min and max. Memory64 (0x04 and up) is not capped here.
    if (flags !== 0x00 && flags !== 0x01 && flags !== 0x03)
      throw new Error(`memory limits of kind ${flags} cannot be capped`);
    const [min, minEnd] = readU32(body, at + 1);
    let end = minEnd;
    let max = maxPages;
    if (flags !== 0x00) {
      const [declared, maxEnd] = readU32(body, minEnd);
      max = Math.min(declared, maxPages);
      end = maxEnd;
    }
    if (min > maxPages) {
      throw new Error(`the component starts with ${min * 64} KiB of memory; the limit is ${maxPages * 64} KiB`);
    }
    out.push(flags === 0x00 ? 0x01 : flags, ...writeU32(min), ...writeU32(max));
    at = end;
  }
  return out;
}

function readU32(bytes: Uint8Array, start: number): [number, number] {
  let value = 0;
  let shift = 0;
  for (let at = start; at < bytes.length && shift < 35; at++, shift += 7) {
    const byte = bytes[at]!;
    value += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return [value, at + 1];
  }
  throw new Error("a malformed LEB128 number");
}

function writeU32(value: number): number[] {
  const out: number[] = [];
  let rest = value;
  do {
    let byte = rest % 128;
    rest = Math.floor(rest / 128);
    if (rest > 0) byte |= 0x80;
    out.push(byte);
  } while (rest > 0);
  return out;
}
