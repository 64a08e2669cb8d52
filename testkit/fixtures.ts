// Things a test file starts in a hook and stops after its tests (a server, a fake API, a client),
// named like constants. Each helper registers the hooks and returns a stand-in that reads through
// to the started value, so a file says in one line what it runs, and its tests and helpers use the
// name directly instead of a `let` assigned in a beforeAll.
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";

type Start<T> = () => T | Promise<T>;
type Stop<T> = (value: T) => unknown;
type Closable = { close(): unknown };

export interface FixtureOptions<T> {
  /** How to stop it; `close()` by default. */
  stop?: Stop<T>;
  /** For each of the start and stop hooks; vitest's hookTimeout by default. */
  timeoutMs?: number;
}

/**
 * Started before the enclosing suite's (or file's) tests, stopped after them. Stops run in the
 * reverse order of the starts (vitest runs after-hooks as a stack).
 */
export function startedBeforeAll<T extends Closable>(start: Start<T>, options?: FixtureOptions<T>): T;
export function startedBeforeAll<T extends object>(start: Start<T>, options: FixtureOptions<T> & { stop: Stop<T> }): T;
export function startedBeforeAll<T extends object>(start: Start<T>, options: FixtureOptions<T> = {}): T {
  return started(beforeAll, afterAll, start, options);
}

/** Started before each test of the enclosing suite (or file), stopped after it. */
export function startedBeforeEach<T extends Closable>(start: Start<T>, options?: FixtureOptions<T>): T;
export function startedBeforeEach<T extends object>(start: Start<T>, options: FixtureOptions<T> & { stop: Stop<T> }): T;
export function startedBeforeEach<T extends object>(start: Start<T>, options: FixtureOptions<T> = {}): T {
  return started(beforeEach, afterEach, start, options);
}

type Hook = (fn: () => Promise<void>, timeoutMs?: number) => void;

function started<T extends object>(before: Hook, after: Hook, start: Start<T>, options: FixtureOptions<T>): T {
  const slot: { value?: T } = {};
  const stop = options.stop ?? ((value: T) => (value as Closable).close());
  before(async () => {
    slot.value = await start();
  }, options.timeoutMs);
  after(async () => {
    const value = slot.value;
    slot.value = undefined;
    // Nothing to stop when the start failed: vitest reports that failure.
    if (value !== undefined) await stop(value);
  }, options.timeoutMs);
  return standIn(slot);
}

function standIn<T extends object>(slot: { value?: T }): T {
  return new Proxy({} as T, {
    get(_, key) {
      const target = slot.value;
      if (target === undefined) {
        // Not a thenable: `await` on the stand-in must not throw.
        if (key === "then") return undefined;
        throw new Error(`read ${String(key)} of a test fixture outside the tests it was started for`);
      }
      const value: unknown = Reflect.get(target, key);
      // A class's methods may use private fields (the SDK's Brain), so they get their own instance
      // as `this`; own function properties (closures, a postgres pool's `sql`) are returned as they
      // are, keeping their own properties (`sql.unsafe`).
      return typeof value === "function" && !Object.hasOwn(target, key) ? value.bind(target) : value;
    },
  });
}
