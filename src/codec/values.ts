// Scalar rules shared by the XML and JSON codecs (wire contract §2–3): booleans true/false, decimal
// integers, ISO-8601 dates, enumerations matched case-insensitively and written canonically.
import { DecodeError } from '../errors';
import type { ScalarField } from '../model/schema';
import { hasNonXmlChar } from '../model/text-rules';

const INT = /^[+-]?\d{1,16}$/;
const DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})?$/;

/** Decode the text of a scalar element (XML) into its typed value. */
export function scalarFromText(f: ScalarField, text: string, path: string): unknown {
  switch (f.type) {
    case 'boolean':
      if (text === 'true' || text === '1') return true;
      if (text === 'false' || text === '0') return false;
      throw new DecodeError(`expected a boolean (true/false), got ${quote(text)}`, path);
    case 'int':
    case 'long':
      return integer(text, path);
    default:
      return checkString(f, text, path);
  }
}

/** Check a JSON value against its scalar type; no coercion between strings, numbers and booleans. */
export function scalarFromJson(f: ScalarField, v: unknown, path: string): unknown {
  switch (f.type) {
    case 'boolean':
      if (typeof v === 'boolean') return v;
      throw new DecodeError(`expected a boolean, got ${describe(v, f)}`, path);
    case 'int':
    case 'long':
      if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
      throw new DecodeError(`expected an integer, got ${describe(v, f)}`, path);
    default:
      if (typeof v === 'string') return checkString(f, v, path);
      throw new DecodeError(`expected a string, got ${describe(v, f)}`, path);
  }
}

/** The text written for a scalar value, or undefined to leave the element out. */
export function scalarToText(f: ScalarField, v: unknown, path: string): string {
  switch (f.type) {
    case 'boolean':
      if (typeof v !== 'boolean') throw new TypeError(`${path}: expected a boolean, got ${describe(v, f)}`);
      return v ? 'true' : 'false';
    case 'int':
    case 'long':
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new TypeError(`${path}: expected an integer, got ${describe(v, f)}`);
      return String(v);
    default:
      if (typeof v !== 'string') throw new TypeError(`${path}: expected a string, got ${describe(v, f)}`);
      return v;
  }
}

function integer(text: string, path: string): number {
  if (!INT.test(text)) throw new DecodeError(`expected an integer, got ${quote(text)}`, path);
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new DecodeError(`integer out of range: ${quote(text)}`, path);
  return n;
}

function checkString(f: ScalarField, s: string, path: string): string {
  if (hasNonXmlChar(s)) throw new DecodeError('control characters are not allowed', path);
  if (f.type === 'dateTime' && !DATE.test(s)) throw new DecodeError(`expected an ISO-8601 date, got ${quote(s)}`, path);
  if (f.values) {
    const lower = s.toLowerCase();
    const canonical = f.values.find((v) => v.toLowerCase() === lower);
    if (canonical === undefined) throw new DecodeError(`expected one of ${f.values.join(', ')}, got ${quote(s)}`, path);
    return canonical;
  }
  return s;
}

function quote(s: string): string {
  return JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);
}

/** A value as an error message may show it: a secret field's value never. */
function describe(v: unknown, f?: ScalarField): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  if (f?.secret) return `a ${typeof v} (not shown: secret field)`;
  if (typeof v === 'string') return `the string ${quote(v)}`;
  return `${typeof v} ${String(v)}`;
}
