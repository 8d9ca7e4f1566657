// Reads a resource's inputs in `check`: one clear failure per property, UNKNOWN (preview) passed through
// unvalidated, nothing sent to the service.
import type { Rule } from '../../src/model/field-rules';
import { isRecord, UNKNOWN, type Props } from './plain';

export interface CheckFailure { property: string; reason: string }

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

  /** Text; with `rule` (a model rule), "<key> must be <what it says>" when it breaks it. */
  string(key: string, o: { required?: boolean; pattern?: RegExp; hint?: string; default?: string; rule?: Rule } = {}): string | undefined {
    const v = this.src[key];
    if (v === undefined || v === null || v === '') {
      if (o.default !== undefined) return o.default;
      if (o.required) this.fail(key, `${key} is required`);
      return undefined;
    }
    if (v === UNKNOWN) return UNKNOWN;
    if (typeof v !== 'string') return void this.fail(key, `${key} must be a string, not ${typeName(v)}`);
    if (o.pattern && !o.pattern.test(v)) return void this.fail(key, `${key} ${o.hint ?? `must match ${o.pattern}`}: "${v}"`);
    if (o.rule && !o.rule.test(v)) return void this.fail(key, `${key} must be ${o.rule.says}: ${JSON.stringify(v)}`);
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

/** `name`, `version`, `description`: how every library object is named. */
export interface Named { name: string; version: string; description?: string }

export function checkNamed(r: Inputs): Props {
  return {
    name: r.string('name', { required: true }),
    version: r.string('version', { required: true }),
    description: r.string('description'),
  };
}
