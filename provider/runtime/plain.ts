// Values as the engine passes them (protobuf Structs made plain): the preview's unknown sentinel,
// structural equality, and readers that take a stored value without trusting its type.

/** What the engine sends for an input that is not known yet (design/pulumi-and-action.md, "preview"). */
export const UNKNOWN = '04da6b54-80e4-46f7-96ec-b56ff0331ba9';

export type Props = Record<string, unknown>;

export const isUnknown = (v: unknown): v is typeof UNKNOWN => v === UNKNOWN;

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

/** A stored string, or undefined when absent or of another type (state may come from an older release). */
export const stringOf = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The strings of a stored list. */
export const stringsOf = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
