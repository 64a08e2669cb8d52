import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { BrainError, ComponentUploadResultSchema } from "./contracts.js";
import type { HttpClient } from "./http-client.js";

/**
 * A WebAssembly component exporting brain:tool@0.2.0 (`contracts/tool.wit`). Brain receives the
 * file when a session using it is created: content-addressed by SHA-256, uploaded only if Brain
 * does not have it, and admitted once per server. A successful admission is cached on this
 * object; a failed one is not, so a fixed file can be retried.
 */
export class Component {
  readonly url: URL;
  #bytes: Promise<{ bytes: Buffer; sha256: string }> | undefined;
  readonly #admitted = new Set<string>();

  constructor(url: URL | string) {
    this.url = typeof url === "string" ? new URL(url) : url;
    if (this.url.protocol !== "file:") {
      throw new BrainError("invalid_tool", `component(): only file: URLs are supported, got ${this.url.protocol}`);
    }
  }

  /** The bytes and their digest, read once. */
  load(): Promise<{ bytes: Buffer; sha256: string }> {
    this.#bytes ??= readFile(fileURLToPath(this.url)).then(
      (bytes) => ({ bytes, sha256: createHash("sha256").update(bytes).digest("hex") }),
      (error: unknown) => {
        this.#bytes = undefined;
        throw new BrainError("invalid_tool", `component(): cannot read ${this.url.href}: ${(error as Error).message}`);
      },
    );
    return this.#bytes;
  }

  /** Makes sure the server at `http.baseUrl` holds this component; returns its digest. */
  async admit(http: HttpClient): Promise<string> {
    const { bytes, sha256 } = await this.load();
    if (this.#admitted.has(http.baseUrl)) return sha256;
    const path = `/v1/components/${sha256}`;
    try {
      const head = await http.fetch("HEAD", path, { allowStatus: [404] });
      if (head.status !== 200) {
        await http.request("PUT", path, {
          raw: { body: bytes, contentType: "application/wasm" },
          schema: ComponentUploadResultSchema,
        });
      }
    } catch (error) {
      // Not cached: the next attempt reads the file again (it may have been rebuilt).
      this.#bytes = undefined;
      throw error;
    }
    this.#admitted.add(http.baseUrl);
    return sha256;
  }
}

/** `component(new URL("./inspect.wasm", import.meta.url))`: a tool implementation. */
export function component(url: URL | string): Component {
  return new Component(url);
}
