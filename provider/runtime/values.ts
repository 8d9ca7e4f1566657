// Plain-value helpers shared by every resource's check and diff: the preview's unknown sentinel,
// structural equality, and a collector of per-property check failures.

/** What the engine sends for an input that is not known yet (design/pulumi-and-action.md, "preview"). */
export const UNKNOWN = '04da6b54-80e4-46f7-96ec-b56ff0331ba9';

export type Props = Record<string, unknown>;

export interface CheckFailure { property: string; reason: string }

export const isUnknown = (v: unknown): boolean => v === UNKNOWN;

/** Whether a value holds the unknown sentinel at any depth. */
export function containsUnknown(v: unknown): boolean {
  if (v === UNKNOWN) return true;
  if (Array.isArray(v)) return v.some(containsUnknown);
  if (isRecord(v)) return Object.values(v).some(containsUnknown);
  return false;
}

export function isRecord(v: unknown): v is Props {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Structural equality of JSON-like values; a missing key equals `undefined` and `null`. */
export function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((a === undefined || a === null) && (b === undefined || b === null)) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (isRecord(a) && isRecord(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) if (!same(a[k], b[k])) return false;
    return true;
  }
  return false;
}

/** A copy without `undefined` members, which a protobuf Struct cannot carry. */
export function plain<T>(v: T): T {
  if (Array.isArray(v)) return v.map(plain) as T;
  if (isRecord(v)) {
    const out: Props = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = plain(x);
    return out as T;
  }
  return v;
}

/**
 * Reads inputs for `check`, recording one clear failure per property. Each reader returns the value,
 * `UNKNOWN` as is (never validated, never sent to the service), or `undefined` when absent or invalid.
 */
export class Inputs {
  readonly failures: CheckFailure[] = [];
  constructor(private readonly src: Props, private readonly prefix = '') {}

  fail(property: string, reason: string): void {
    this.failures.push({ property: this.prefix + property, reason });
  }

  has(key: string): boolean {
    return this.src[key] !== undefined && this.src[key] !== null;
  }

  raw(key: string): unknown {
    return this.src[key];
  }

  string(key: string, o: { required?: boolean; pattern?: RegExp; hint?: string; default?: string } = {}): string | undefined {
    const v = this.src[key];
    if (v === undefined || v === null || v === '') {
      if (o.default !== undefined) return o.default;
      if (o.required) this.fail(key, `${key} is required`);
      return undefined;
    }
    if (v === UNKNOWN) return UNKNOWN;
    if (typeof v !== 'string') return void this.fail(key, `${key} must be a string, not ${typeName(v)}`);
    if (o.pattern && !o.pattern.test(v)) return void this.fail(key, `${key} ${o.hint ?? `must match ${o.pattern}`}: "${v}"`);
    return v;
  }

  boolean(key: string, dflt: boolean): boolean | string {
    const v = this.src[key];
    if (v === undefined || v === null) return dflt;
    if (v === UNKNOWN || typeof v === 'boolean') return v;
    this.fail(key, `${key} must be true or false, not ${typeName(v)}`);
    return dflt;
  }

  integer(key: string, o: { min: number; max: number; default?: number; required?: boolean; unit?: string }): number | string | undefined {
    const v = this.src[key];
    if (v === undefined || v === null) {
      if (o.required) this.fail(key, `${key} is required`);
      return o.default;
    }
    if (v === UNKNOWN) return UNKNOWN;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < o.min || v > o.max) {
      return void this.fail(key, `${key} must be a whole number from ${o.min} to ${o.max}${o.unit ? ` (${o.unit})` : ''}, not ${JSON.stringify(v)}`);
    }
    return v;
  }

  /** A list whose items are read by `item` with a prefix such as `files[2].`; UNKNOWN stays as is. */
  list<T>(key: string, item: (r: Inputs, raw: unknown, index: number) => T | undefined, o: { required?: boolean } = {}): T[] | string | undefined {
    const v = this.src[key];
    if (v === undefined || v === null) {
      if (o.required) this.fail(key, `${key} is required`);
      return undefined;
    }
    if (v === UNKNOWN) return UNKNOWN;
    if (!Array.isArray(v)) return void this.fail(key, `${key} must be a list, not ${typeName(v)}`);
    const out: T[] = [];
    v.forEach((x, i) => {
      const sub = new Inputs(isRecord(x) ? x : {}, `${this.prefix}${key}[${i}].`);
      const r = item(sub, x, i);
      this.failures.push(...sub.failures);
      if (r !== undefined) out.push(r);
    });
    return out;
  }

  /** A nested object read by `read` with a prefix such as `account.`; UNKNOWN stays as is. */
  object<T>(key: string, read: (r: Inputs) => T, o: { required?: boolean } = {}): T | string | undefined {
    const v = this.src[key];
    if (v === undefined || v === null) {
      if (o.required) this.fail(key, `${key} is required`);
      return undefined;
    }
    if (v === UNKNOWN) return UNKNOWN;
    if (!isRecord(v)) return void this.fail(key, `${key} must be an object, not ${typeName(v)}`);
    const sub = new Inputs(v, `${this.prefix}${key}.`);
    const r = read(sub);
    this.failures.push(...sub.failures);
    return r;
  }
}

function typeName(v: unknown): string {
  return Array.isArray(v) ? 'a list' : v === null ? 'null' : typeof v === 'object' ? 'an object' : `${typeof v} ${JSON.stringify(v)}`;
}
