import { BrainError } from "@aexhq/brain-contracts";
import { emptyKeys } from "@aexhq/brain-db/commits";
import { recall, remember, sha256 } from "@aexhq/brain-db/ops";
import type { WriteOp } from "@aexhq/brain-db/writer";
import { canonicalJson } from "../canonical-json.js";
import type { Services } from "../services.js";

/** A stable hash of a parsed request body: key order does not matter, content does. */
export function requestHash(body: unknown): Buffer {
  return sha256(canonicalJson(body));
}

/**
 * Runs a write under an Idempotency-Key in one transaction: the same key with the same body
 * returns the first answer (re-read through `replay`), another body is `idempotency_conflict`.
 */
export async function withIdempotency<R, S>(
  rt: Pick<Services, "writer">,
  scope: string,
  key: string,
  body: unknown,
  op: WriteOp<R>,
  summarize: (result: R) => Promise<S>,
  replay: (stored: S) => Promise<R>,
): Promise<R> {
  if (key.length > 256) throw new BrainError("invalid_request", "Idempotency-Key is longer than 256 characters.");
  const hash = requestHash(body);
  const outcome = await rt.writer.submit<{ fresh: R } | { stored: S }>({
    exclusive: true,
    keys: (r) => ("fresh" in r ? op.keys(r.fresh) : emptyKeys()),
    run: async (tx) => {
      const seen = await recall<S>(tx, scope, key, hash);
      if (seen.kind === "conflict") throw new BrainError("idempotency_conflict");
      if (seen.kind === "same") return { stored: seen.response };
      const fresh = await op.run(tx);
      await remember(tx, scope, key, await summarize(fresh));
      return { fresh };
    },
  });
  return "fresh" in outcome ? outcome.fresh : replay(outcome.stored);
}
