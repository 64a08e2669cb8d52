import { z } from "zod";
import type { Component } from "./component.js";
import type { ToolContext } from "./context.js";
import {
  BrainError,
  findNonJson,
  type Outcome,
  TOOL_NAME_PATTERN,
  type ToolPlacement,
  ToolPlacementSchema,
} from "./contracts.js";
import type { BrainEnvironment, HostEnvironment, HttpEnvironment } from "./environment.js";
import { exportJsonSchema, type JsonSchema } from "./json-schema.js";
import { type AnyEnvironment, deepFreeze, parseOptions, placementEnv, splitEnv } from "./tool-options.js";

type OptionalSchema = z.ZodType | undefined;

/** The options a handler sees: parsed by the options schema and frozen. */
export type ToolOptions<P extends OptionalSchema> = P extends z.ZodType
  ? Readonly<z.output<P>>
  : Readonly<Record<string, never>>;

/** What a handler may publish as ordinary output: the output schema's input, or any JSON. */
export type ToolValue<O extends OptionalSchema> = O extends z.ZodType ? z.input<O> : unknown;

/** What `run` may return: ordinary output, an Outcome, or nothing (no result). */
// biome-ignore lint/suspicious/noConfusingVoidType: `return ctx.finish(x)` and a bare `return;` are typed void.
export type ToolReturn<O extends OptionalSchema> = ToolValue<O> | Outcome | undefined | void;

export interface ToolDefinition<
  I extends z.ZodType = z.ZodType,
  O extends OptionalSchema = undefined,
  P extends OptionalSchema = undefined,
> {
  /** The name the model sees; matches ^[a-zA-Z][a-zA-Z0-9_-]{0,63}$ and is unique in a session. */
  name: string;
  description: string;
  /** Validated with parseAsync before `run`; the handler receives defaults and transforms applied. */
  input: I;
  /** Validates every ordinary output (and every explicit ok.value); non-success outcomes bypass it. */
  output?: O;
  /** Validates factory options; without it the factory takes no options besides `env`. */
  options?: P;
  /**
   * The tool's own run limit in ms; absent or 0: none of its own, so a call runs until the earliest
   * caller deadline (session or turn) or BRAIN_MAX_TOOL_SECS, if any, or unlimited.
   */
  timeoutMs?: number;
  /**
   * "always": each call waits for a person to approve it (as is, or with edited input) or deny it
   * before it is sent to whatever runs it (`session.approvals()`, `approve`, `deny`). A function
   * (tools with `run` only): asked of each call's parsed input here, in the host, before `run`;
   * `true` (or a throw, or a rejection) holds the call for a person as "always" does, `false` runs
   * it. Its answer is journaled (approval_checked); an approved call runs without asking it again.
   */
  approval?: "always" | ((input: z.output<I>) => boolean | Promise<boolean>);
  /** Runs in the registering application (a host environment). Exactly one of run / implementation. */
  run?: (input: z.output<I>, ctx: ToolContext<ToolOptions<P>, ToolValue<O>>) => ToolReturn<O> | Promise<ToolReturn<O>>;
  /**
   * Runs outside the application: a WebAssembly component (placed in a Brain environment), or a
   * function of the parsed options returning a JSON descriptor its Environment interprets (e.g.
   * `{ type: "http_json", method, path }` in an HTTP Environment). The descriptor is made once, at
   * placement, frozen, and handed to the Environment with every invocation.
   */
  implementation?: Component | ((options: ToolOptions<P>) => unknown);
}

/** The factory argument: the tool's options plus an optional `env` placement. */
export type FactoryOptions<P extends OptionalSchema> = (P extends z.ZodType ? z.input<P> : unknown) & {
  env?: HostEnvironment | BrainEnvironment | HttpEnvironment;
};

type FactoryArgs<P extends OptionalSchema> = P extends z.ZodType
  ? Partial<z.input<P>> extends z.input<P>
    ? [options?: FactoryOptions<P>]
    : [options: FactoryOptions<P>]
  : [options?: { env?: HostEnvironment | BrainEnvironment | HttpEnvironment }];

/** A declared tool: call it to place it (`lookup()` or `lookup({ env, ...options })`). */
export interface Tool<P extends OptionalSchema = OptionalSchema> {
  (...args: FactoryArgs<P>): PlacedTool;
  readonly name: string;
  readonly description: string;
  /** What the input schema accepts before parsing (io: "input"). */
  readonly inputSchema: JsonSchema;
  /** What the output schema produces (io: "output"), or null without an output schema. */
  readonly outputSchema: JsonSchema | null;
  readonly timeoutMs: number | undefined;
  /**
   * The component a component tool runs (its executable reference, resolved against the declaring
   * module's URL), or undefined for run and descriptor tools. `brain-tools check` reads it to make
   * sure a package ships the file.
   */
  readonly component: Component | undefined;
}

/** A tool configured by its factory and bound to an environment; pass it to `sessions.create`. */
export interface PlacedTool {
  readonly name: string;
  readonly env: AnyEnvironment;
  /** The placement as sent to Brain when a session is created. */
  readonly placement: ToolPlacement;
  /** The parsed, frozen options its handler receives as `ctx.options`. */
  readonly options: unknown;
}

/** What the host needs to run a placed tool; kept out of the public object. */
export interface ToolRuntime {
  readonly name: string;
  readonly input: z.ZodType;
  readonly output: z.ZodType | undefined;
  readonly options: unknown;
  readonly run: (input: unknown, ctx: ToolContext) => unknown;
  /** The approval predicate (a tool declared with `approval: fn`): true holds the call for a person. */
  readonly needsApproval?: ((input: unknown) => boolean | Promise<boolean>) | undefined;
}

const runtimes = new WeakMap<PlacedTool, ToolRuntime>();
const components = new WeakMap<PlacedTool, Component>();
const descriptors = new WeakSet<PlacedTool>();

/** Whether a value was made by a tool factory (host tool or component tool). */
export function isPlacedTool(value: unknown): value is PlacedTool {
  return (
    typeof value === "object" &&
    value !== null &&
    (runtimes.has(value as PlacedTool) || components.has(value as PlacedTool) || descriptors.has(value as PlacedTool))
  );
}

/** The component a placed tool runs, if it is a component tool. */
export function componentOf(placed: PlacedTool): Component | undefined {
  return components.get(placed);
}

/** The runtime of a placement made by a tool factory; anything else is refused. */
export function runtimeOf(placed: PlacedTool): ToolRuntime {
  const runtime = runtimes.get(placed);
  if (runtime === undefined) {
    throw new BrainError("invalid_tool", "Sessions take placed tools: call the tool factory, e.g. lookup().");
  }
  return runtime;
}

export function tool<I extends z.ZodType, O extends OptionalSchema = undefined, P extends OptionalSchema = undefined>(
  definition: ToolDefinition<I, O, P>,
): Tool<P> {
  const {
    name,
    description,
    input,
    output,
    options: optionsSchema,
    timeoutMs,
    run,
    implementation,
    approval,
  } = definition;
  const describe = checkDefinition(definition);
  const template = templateOf(definition);
  const { inputSchema, outputSchema } = template;

  const factory = (argument?: unknown): PlacedTool => {
    const split = splitEnv(name, argument);
    const env = placementEnv(name, split.env, run ? "run" : describe ? "descriptor" : "component");
    const parsedOptions = parseOptions(name, optionsSchema, split.options);
    if (describe) {
      const descriptor = makeDescriptor(name, describe, parsedOptions);
      const placed: PlacedTool = Object.freeze({
        name,
        env,
        placement: Object.freeze({
          ...template,
          env,
          implementation: Object.freeze({ type: "descriptor" as const, descriptor }),
          options: parsedOptions as ToolPlacement["options"],
        }),
        options: parsedOptions,
      });
      descriptors.add(placed);
      return placed;
    }
    if (implementation !== undefined) {
      // The digest is filled in when the session is created (the file is read and uploaded then).
      const placed: PlacedTool = Object.freeze({
        name,
        env,
        placement: Object.freeze({ ...template, env, options: parsedOptions as ToolPlacement["options"] }),
        options: parsedOptions,
      });
      components.set(placed, implementation as Component);
      return placed;
    }
    const placed: PlacedTool = Object.freeze({
      name,
      env,
      placement: Object.freeze({ ...template, env }),
      options: parsedOptions,
    });
    runtimes.set(placed, {
      name,
      input,
      output,
      options: parsedOptions,
      run: run as ToolRuntime["run"],
      needsApproval: typeof approval === "function" ? (approval as ToolRuntime["needsApproval"]) : undefined,
    });
    return placed;
  };
  Object.defineProperty(factory, "name", { value: name });
  return Object.freeze(
    Object.assign(factory, {
      description,
      inputSchema,
      outputSchema,
      timeoutMs,
      component: describe ? undefined : (implementation as Component | undefined),
    }),
  ) as unknown as Tool<P>;
}

/** The placement a declaration makes, but for its `env`: its schemas exported, checked as a whole. */
function templateOf<I extends z.ZodType, O extends OptionalSchema, P extends OptionalSchema>(
  definition: ToolDefinition<I, O, P>,
) {
  const { name, description, input, output, timeoutMs, approval } = definition;
  const inputSchema = exportJsonSchema(input, "input", `${name}: the input schema`);
  const outputSchema = output === undefined ? null : exportJsonSchema(output, "output", `${name}: the output schema`);
  const template = {
    name,
    description,
    inputSchema,
    outputSchema,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(approval === undefined ? {} : { approval: approvalMode(approval) }),
  };
  const checked = ToolPlacementSchema.safeParse({ ...template, env: { type: "host", name: "application" } });
  if (!checked.success) {
    throw new BrainError(
      "invalid_tool",
      `The declaration of tool ${JSON.stringify(name)} is malformed.`,
      checked.error.issues,
    );
  }
  return template;
}

/** How a placement advertises a declaration's approval gate. */
function approvalMode(approval: "always" | ((input: never) => unknown)): "always" | "predicate" {
  return typeof approval === "function" ? "predicate" : approval;
}

/**
 * What a declaration must be before its schemas are exported: a valid name, a zod input, exactly
 * one of `run` and `implementation`, no `env` among the factory options. Answers the descriptor
 * function, when the implementation is one.
 */
function checkDefinition<I extends z.ZodType, O extends OptionalSchema, P extends OptionalSchema>(
  definition: ToolDefinition<I, O, P>,
): ((options: never) => unknown) | undefined {
  const { name, input, options: optionsSchema, run, implementation } = definition;
  if (typeof name !== "string" || !TOOL_NAME_PATTERN.test(name)) {
    throw new BrainError("invalid_tool", `Tool names match ${TOOL_NAME_PATTERN}; got ${JSON.stringify(name)}.`);
  }
  if (!(input instanceof z.ZodType)) throw new BrainError("invalid_tool", `${name}: input must be a zod schema.`);
  if ((run === undefined) === (implementation === undefined)) {
    throw new BrainError("invalid_tool", `${name}: declare exactly one of run and implementation.`);
  }
  if (run !== undefined && typeof run !== "function") {
    throw new BrainError("invalid_tool", `${name}: run must be a function.`);
  }
  if (typeof definition.approval === "function" && run === undefined) {
    throw new BrainError("invalid_tool", `${name}: an approval predicate needs run (the host asks it); use "always".`);
  }
  const describe = typeof implementation === "function" ? implementation : undefined;
  if (implementation !== undefined && !describe && typeof (implementation as Component).admit !== "function") {
    throw new BrainError(
      "invalid_tool",
      `${name}: implementation must come from component(url) or be a function of the options returning a descriptor.`,
    );
  }
  if (optionsSchema instanceof z.ZodObject && "env" in optionsSchema.shape) {
    throw new BrainError("invalid_tool", `${name}: "env" is reserved in factory options for the placement.`);
  }
  return describe;
}

/** Calls the descriptor function once, at placement; the descriptor must be plain JSON. */
type Descriptor = Extract<NonNullable<ToolPlacement["implementation"]>, { type: "descriptor" }>["descriptor"];

function makeDescriptor(name: string, describe: (options: never) => unknown, options: unknown): Descriptor {
  let descriptor: unknown;
  try {
    descriptor = describe(options as never);
  } catch (err) {
    throw new BrainError("invalid_options", `${name}: the implementation function threw: ${String(err)}.`);
  }
  const bad = descriptor === undefined ? "$" : findNonJson(descriptor);
  if (bad !== null) {
    throw new BrainError("invalid_options", `${name}: the descriptor is not plain JSON at ${bad}.`, { path: bad });
  }
  return deepFreeze(structuredClone(descriptor)) as Descriptor;
}
