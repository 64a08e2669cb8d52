import { createHash } from "node:crypto";
import { BrainError, exportsToolRun, isComponentBinary } from "@aexhq/brain-contracts";
import { componentWit } from "@bytecodealliance/jco";

export interface Admitted {
  sha256: string;
  size: number;
  wit: string;
}

/**
 * Admission: the bytes are what their digest says, a WebAssembly component (not a core module),
 * and it exports the brain:tool world's `run`. Anything else is refused before it is stored, so a
 * worker only ever loads components that can be invoked.
 */
export async function admitComponent(bytes: Buffer, expectedSha256: string): Promise<Admitted> {
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  if (sha256 !== expectedSha256) {
    throw new BrainError("invalid_component", `The body's SHA-256 is ${sha256}, not ${expectedSha256}.`);
  }
  if (!isComponentBinary(bytes)) {
    throw new BrainError("invalid_component", "Not a WebAssembly component (a core module, or not WebAssembly).");
  }
  let wit: string;
  try {
    wit = await componentWit(bytes);
  } catch (error) {
    throw new BrainError("invalid_component", `The component cannot be decoded: ${(error as Error).message}`);
  }
  if (!exportsToolRun(wit)) {
    throw new BrainError("invalid_component", "The component does not export brain:tool@0.2.0's run(invocation).");
  }
  return { sha256, size: bytes.length, wit };
}
