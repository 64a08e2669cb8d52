/**
 * A JSON value as Postgres's jsonb gives it back: what JSON.stringify keeps, with every object's
 * keys in jsonb's order (shorter keys first, then bytewise). A process that hands on what it has
 * just written, instead of reading it back, hands on exactly what a reader would get, so a
 * session's Agentloop sees the same journal whether it wrote, heard or read it.
 */
export function asStoredJson(value: unknown): unknown {
  if (value === undefined) return undefined;
  return ordered(JSON.parse(JSON.stringify(value)));
}

function ordered(value: unknown): unknown {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = ordered(value[i]);
    return value;
  }
  if (value === null || typeof value !== "object") return value;
  const source = value as Record<string, unknown>;
  const keys = Object.keys(source);
  if (keys.length < 2) {
    if (keys.length === 1) source[keys[0]!] = ordered(source[keys[0]!]);
    return source;
  }
  let inOrder = true;
  for (let i = 1; i < keys.length && inOrder; i++) inOrder = jsonbKeyOrder(keys[i - 1]!, keys[i]!) < 0;
  if (inOrder) {
    // A copy already (JSON.parse made it): its keys are where jsonb puts them, so it is kept.
    for (const k of keys) source[k] = ordered(source[k]);
    return source;
  }
  keys.sort(jsonbKeyOrder);
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = ordered(source[k]);
  return out;
}

/** jsonb's key order: by length in bytes, then by bytes (UTF-8). */
export function jsonbKeyOrder(a: string, b: string): number {
  if (isAscii(a) && isAscii(b)) {
    if (a.length !== b.length) return a.length - b.length;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  return x.length !== y.length ? x.length - y.length : Buffer.compare(x, y);
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

/**
 * A written record whose payload is worked out (asStoredJson of `source()`) only if someone reads
 * it: most records handed on in-process are never folded (no Agentloop here, or an emission). A
 * class, so that the getter is its prototype's: an object literal's getter is a new closure per
 * record, and an object of its own shape.
 */
class LazyRecord {
  #source: (() => unknown) | null;
  #payload: unknown;

  constructor(
    readonly seq: number,
    readonly kind: string,
    readonly createdAt: Date,
    source: (() => unknown) | null,
    payload?: unknown,
  ) {
    this.#source = source;
    this.#payload = payload;
  }

  get payload(): unknown {
    if (this.#source !== null) {
      this.#payload = asStoredJson(this.#source());
      this.#source = null;
    }
    return this.#payload;
  }
}

export function lazyRecord(
  seq: number,
  kind: string,
  createdAt: Date,
  source: () => unknown,
): { seq: number; kind: string; createdAt: Date; readonly payload: unknown } {
  return new LazyRecord(seq, kind, createdAt, source);
}

/**
 * A written record whose payload is already what a read returns: built from values Postgres gave
 * back, with its keys in jsonb's order. No copy is made, so nothing may change it afterwards.
 */
export function storedRecord(
  seq: number,
  kind: string,
  createdAt: Date,
  payload: unknown,
): { seq: number; kind: string; createdAt: Date; readonly payload: unknown } {
  return new LazyRecord(seq, kind, createdAt, null, payload);
}
