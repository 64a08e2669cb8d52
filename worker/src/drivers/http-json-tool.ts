/**
 * The v1 convention of `http()` / `httpTool()` placements: Brain POSTs the tool's input as JSON
 * and the 2xx answer's JSON body is the result, as plain data: a body that looks like an outcome
 * envelope is still only data (the value of an ok outcome). It is checked against the placement's
 * output schema; anything else (a non-2xx status, a body that is not JSON, no answer) is
 * `http_error`. A body larger than the activation's emission budget could admit is refused as any
 * result past the budget is: the call ends `budget_exceeded`.
 */
import { errorOutcome } from "@aexhq/brain-contracts";
import { checkedOutcome } from "@aexhq/brain-core/schemas";
import type { DriverCall } from "./driver.js";
import { answerError, type PostAnswer, postJson, unreachable } from "./http-post.js";

export async function runJsonToolCall({ deps, claimed, placement, reporter, running, log }: DriverCall, url: string) {
  let answer: PostAnswer;
  try {
    answer = await postJson(deps.egress, url, JSON.stringify(claimed.input), {
      signal: running.signal,
      maxBytes: deps.maxEmittedBytes,
    });
  } catch (error) {
    // Stopped by us (deadline, ended elsewhere, shutdown): whoever stopped it records the end.
    if (!running.stopped) await reporter.failWith(unreachable(error));
    return;
  }
  if (running.stopped) return;
  if (answer.status < 200 || answer.status > 299) {
    await reporter.failWith(answerError(`The tool's URL answered HTTP ${answer.status}`, answer));
    return;
  }
  if (answer.overflow) {
    await reporter.exceedsBudget(deps.maxEmittedBytes + 1);
    return;
  }
  let body: unknown;
  try {
    body = JSON.parse(answer.body.toString("utf8"));
  } catch {
    await reporter.failWith(answerError(`The tool's URL answered HTTP ${answer.status} without a JSON body`, answer));
    return;
  }
  const reply = await reporter.finish(JSON.stringify(checkedOutcome(placement.outputSchema, body)));
  if (!reply.ok && !reporter.ended) {
    // Over the activation's budget, say (text Postgres cannot store has already ended the call
    // invalid_output): the call must not stay open for want of a result.
    log.warn({ error: reply.error }, "the tool's answer could not be recorded");
    await reporter.failWith(errorOutcome("http_error", `The tool's answer could not be recorded: ${reply.error}`));
    if (!reporter.ended) await reporter.finish(null);
  }
}
