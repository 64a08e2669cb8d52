import { describe, expect, it } from "vitest";
import { ndjsonLines } from "../../src/ndjson.js";

function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

async function collect(chunks: Uint8Array[]): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of ndjsonLines(streamOf(chunks))) lines.push(line);
  return lines;
}

describe("ndjsonLines", () => {
  it("splits lines across chunk boundaries, including inside a multi-byte character", async () => {
    const bytes = new TextEncoder().encode('{"a":"é"}\n{"b":2}\n');
    const cut = bytes.indexOf(0xc3) + 1; // between the two bytes of "é"
    expect(await collect([bytes.slice(0, cut), bytes.slice(cut, 14), bytes.slice(14)])).toEqual([
      '{"a":"é"}',
      '{"b":2}',
    ]);
  });

  it("yields a final line without a newline and skips blank lines", async () => {
    const encoder = new TextEncoder();
    expect(await collect([encoder.encode("1\n\n\r\n2\r\n3")])).toEqual(["1", "2", "3"]);
  });

  it("cancels the stream when the consumer stops early", async () => {
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new TextEncoder().encode("x\n"));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const _line of ndjsonLines(stream)) break;
    expect(cancelled).toBe(true);
  });
});
