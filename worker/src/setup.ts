/**
 * Prepares one claimed call for running: its placement, grants, component and workspace. Any
 * problem is a setup failure: the ordinary tool error path (`setup_failed`), never retried.
 */
import { type Outcome, ToolPlacementSchema } from "@aexhq/brain-contracts";
import type { Sql } from "@aexhq/brain-db/connect";
import type { ClaimedWorkerCall } from "@aexhq/brain-db/ops";
import { setupFailed } from "./call-reporter.js";
import { type ComponentCache, ComponentMemoryError, type LoadedComponent } from "./component-cache.js";
import { memoryExceeded } from "./outcomes.js";
import { unsupportedImports } from "./sandbox/imports.js";
import { materialiseWorkspace, type Workspace } from "./workspace.js";

export interface Prepared {
  component: LoadedComponent;
  /** The invocation as the component receives it (WIT record `invocation`). */
  invocation: { input: string; options: string; deadlineAtMs: number };
  /** The workspace snapshot when granted; the caller removes it. */
  workspace: Workspace | null;
}

export type Setup = { ok: true; prepared: Prepared } | { ok: false; outcome: Outcome };

function failed(message: string, details?: unknown): Setup {
  return { ok: false, outcome: setupFailed(message, details) };
}

export async function prepareCall(sql: Sql, cache: ComponentCache, call: ClaimedWorkerCall): Promise<Setup> {
  const parsed = ToolPlacementSchema.safeParse(call.placement);
  if (!parsed.success) return failed(`tool ${call.tool}: its placement is missing or malformed`);
  const placement = parsed.data;
  if (placement.implementation?.type !== "component" || placement.env.type !== "brain") {
    return failed(`tool ${call.tool} is not a component placed in a brain Environment`);
  }
  const grant = placement.env.filesystem?.workspace;
  if (grant === "write") {
    // The server's allow-list refuses it at session creation; a placement that got past it anyway
    // is refused here rather than silently downgraded to read.
    return failed(`Environment ${placement.env.name}: the workspace "write" grant is not available`, {
      grant: { workspace: "write" },
    });
  }

  const sha256 = placement.implementation.sha256;
  let component: LoadedComponent;
  try {
    component = await cache.load(sha256);
  } catch (error) {
    if (error instanceof ComponentMemoryError) return { ok: false, outcome: memoryExceeded(error.message) };
    return failed(`component ${sha256} could not be loaded: ${(error as Error).message}`);
  }
  const missing = unsupportedImports(component.imports);
  if (missing.length > 0) {
    return failed(
      `unsupported runtime: the component imports ${missing.join(", ")}, which Brain's worker does not provide`,
      {
        unsupported: missing,
      },
    );
  }
  if (!component.exports.includes("run")) return failed(`component ${sha256} does not export run`);

  let workspace: Workspace | null = null;
  if (grant === "read") {
    try {
      workspace = await materialiseWorkspace(sql, call.sessionId);
    } catch (error) {
      return failed(`the session's workspace could not be prepared: ${(error as Error).message}`);
    }
  }
  return {
    ok: true,
    prepared: {
      component,
      workspace,
      invocation: {
        input: JSON.stringify(call.input ?? null),
        // A tool without an options schema is placed with no options: the component sees {}.
        options: JSON.stringify(placement.options ?? {}),
        deadlineAtMs: call.deadline ?? 0,
      },
    },
  };
}
