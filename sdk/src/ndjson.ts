/**
 * Splits a byte stream into its non-empty lines, decoding UTF-8 across chunk boundaries.
 * Stopping the iteration early cancels the underlying stream.
 */
export async function* ndjsonLines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  let done = false;
  try {
    while (true) {
      const chunk = await reader.read();
      if (chunk.done) break;
      buffered += decoder.decode(chunk.value, { stream: true });
      let newline = buffered.indexOf("\n");
      while (newline !== -1) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line !== "") yield line;
        newline = buffered.indexOf("\n");
      }
    }
    done = true;
    const last = (buffered + decoder.decode()).trim();
    if (last !== "") yield last;
  } finally {
    if (!done) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
