/**
 * The running side of ctx.environments: setup (now, again if it failed) and call (a descriptor in
 * the Environment, set up first, exactly as a placed tool is invoked). Their effect is an HTTP
 * request, made before the record that reports it; it stops when the call stops.
 */
import {
  BrainError,
  errorOutcome,
  findUnstorable,
  type Outcome,
  toStorable,
  UNSTORABLE_TEXT,
} from "@aexhq/brain-contracts";
import { invokeInEnvironment, setupNow } from "@aexhq/brain-core/environments";
import { readEnvironment } from "@aexhq/brain-db/ops";
import { z } from "zod";
import type { ToolRequestAnswer } from "../hosts/link.js";
import type { Services } from "../services.js";
import { callSignal } from "./call-signal.js";
import { failed, type HostCall, journal, journaledError, OK, type OperationRequest, recordPayload } from "./journal.js";
import { notFound } from "./manage.js";
import { environmentView, fitsAck } from "./views.js";

type RunDeps = Pick<Services, "sql" | "writer" | "secrets" | "config" | "bus" | "closing" | "egress">;

type Named = OperationRequest & { name: string };

const CallParamsSchema = z.strictObject({ descriptor: z.json(), input: z.json().optional() });

export async function setupOperation(rt: RunDeps, call: HostCall, req: Named, deadline: number | null) {
  const stop = callSignal(rt, call, deadline);
  let row: Awaited<ReturnType<typeof setupNow>>;
  try {
    row = await setupNow(rt, call.sessionId, req.name, stop.signal);
  } finally {
    stop.dispose();
  }
  if (row === "stopped") throw new BrainError("call_ended", "The call ended before the setup finished.");
  if (row === null) throw notFound(req.name);
  const setup = row;
  const outcome =
    setup.status === "failed" ? failed({ code: "setup_failed", message: setup.setupError ?? "the setup failed" }) : OK;
  const r = await journal(rt, call, { requireOpenCall: false, payload: () => recordPayload(call, req, outcome) });
  // A failed setup is an answer too: the view says so (status "failed", setupError).
  return { sequence: r.seq, value: environmentView(setup) } satisfies ToolRequestAnswer;
}

export async function callOperation(
  rt: RunDeps,
  call: HostCall,
  req: Named,
  params: unknown,
  context: { deadline: number | null; emittedBytes: number },
) {
  const parsed = CallParamsSchema.safeParse(params);
  if (!parsed.success) {
    throw new BrainError("invalid_request", "call takes { descriptor, input? } (JSON).");
  }
  if (!(await readEnvironment(rt.sql, call.sessionId, req.name))) throw notFound(req.name);
  if (context.emittedBytes >= rt.config.maxEmittedBytes) throw new BrainError("budget_exceeded");
  const stop = callSignal(rt, call, context.deadline);
  let outcome: Outcome;
  try {
    outcome = await invokeInEnvironment(rt, {
      sessionId: call.sessionId,
      environment: req.name,
      descriptor: parsed.data.descriptor,
      input: parsed.data.input ?? {},
      signal: stop.signal,
    });
  } finally {
    stop.dispose();
  }
  if (!fitsAck(outcome)) {
    outcome = errorOutcome("result_too_large", "The answer exceeds the frame size limit.");
  }
  outcome = storableAnswer(outcome);
  const recorded =
    outcome.status === "ok"
      ? recordPayload(call, req, OK, { value: outcome.value })
      : recordPayload(call, req, outcome.status === "error" ? failed(outcome.error) : failed(interrupted(outcome)));
  // Its result is an emission of the call like any other: it counts against the activation's budget.
  const r = await journal(rt, call, {
    requireOpenCall: false,
    maxBytes: rt.config.maxEmittedBytes,
    payload: () => recorded,
  });
  // Refused, it was journaled as emission_rejected.
  if (r.refused === "budget_exceeded") throw journaledError(new BrainError("budget_exceeded"));
  return { sequence: r.seq, value: outcome } satisfies ToolRequestAnswer;
}

/**
 * The answer is journaled: an ok value with text Postgres cannot store is `invalid_output`, as a
 * placed HTTP Environment tool's would be; Brain's own error messages are made storable.
 */
function storableAnswer(outcome: Outcome): Outcome {
  const where = outcome.status === "ok" ? findUnstorable(outcome.value, "$.value") : null;
  if (where === null) return toStorable(outcome);
  return errorOutcome("invalid_output", `The answer contains ${UNSTORABLE_TEXT} at ${where}, which cannot be stored.`);
}

function interrupted(outcome: Outcome): { code: string; message: string } {
  return { code: "http_error", message: `the request ended ${outcome.status}` };
}
