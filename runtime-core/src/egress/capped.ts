/**
 * A byte cap on an upstream's answer (a model provider's stream, an MCP server's body): past
 * `maxBytes` the body errors with `tooLarge()` and the connection is let go, so a server that
 * streams without end costs a bounded amount of memory, whoever reads it and however.
 */
export function cappedResponse(response: Response, maxBytes: number, tooLarge: () => Error): Response {
  if (!response.body || [101, 204, 205, 304].includes(response.status)) return response;
  let seen = 0;
  const counted = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > maxBytes) controller.error(tooLarge());
        else controller.enqueue(chunk);
      },
    }),
  );
  const capped = new Response(counted, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  // What a client reads off a fetch answer besides its body.
  Object.defineProperty(capped, "url", { value: response.url });
  return capped;
}

/** How a client reaches an upstream: the egress guard's fetch, and the cap on each answer. */
export interface Upstream {
  fetch: typeof globalThis.fetch;
  /** An answer past this many bytes errors its body (`answer_too_large`). */
  maxAnswerBytes: number;
}

/** A fetch whose every answer is capped (see cappedResponse). */
export function cappedFetch(fetchImpl: typeof fetch, maxBytes: number, tooLarge: () => Error): typeof fetch {
  return async (input, init) => cappedResponse(await fetchImpl(input, init), maxBytes, tooLarge);
}
