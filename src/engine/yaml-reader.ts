// Typed reads over a YAML (or JSON: YAML 1.2 reads it too) document that remember where each value
// was written. Every read that fails adds a problem and returns undefined, so that validation goes
// on and reports every problem at once.
import { isMap, isScalar, isSeq, type LineCounter, type Node, type Pair } from 'yaml';
import { echo } from '../error-text';
import { secretsOf } from '../model/redact';
import type { FieldSpec, Kind, MapSpec, Shape, TextSpec } from './declaration-format';
import { interpolateEnv, type Env, type Vars } from './env-refs';
import { nearMiss, platformOnlyKey } from './platform-keys';
import type { Position, ProblemList } from './problems';
import type { SecretSet } from './secrets';

export type YNode = Node | null | undefined;

/** The keys of a shape whose values are of one of these kinds. */
type KeyOf<S extends Shape, K extends Kind> = { [P in keyof S['fields'] & string]: S['fields'][P]['kind'] extends K ? P : never }[keyof S['fields'] & string];
type ChildOf<S extends Shape, P extends keyof S['fields']> = S['fields'][P] extends MapSpec<infer C> ? C : never;

export interface ReaderOptions {
  /** Unknown fields are errors, not warnings (`validate --strict`). */
  readonly strict?: boolean | undefined;
  /** An unset `${env:NAME}` or `${var:NAME}` is a warning, not an error: `validate` runs where CI secrets are absent. */
  readonly envOptional?: boolean | undefined;
  /** The values of `${var:NAME}` (engine/vars.ts); none by default. */
  readonly vars?: Vars | undefined;
  /**
   * Values are checked against the closed lists the service checks, as shipped (vocabularies.ts): `true`
   * (`validate`) all of them, the image formats too; `'model'` (plan, apply) the model's lists and rules only
   * (names, architectures, keyboards, time zones, install profile), the formats being asked of the service.
   */
  readonly vocabularies?: boolean | 'model' | undefined;
}

export class YamlReader {
  /** Every variable the file names in `${env:…}`, set or not. */
  readonly envNames = new Set<string>();
  /** Every variable the file names in `${var:…}`, set or not. */
  readonly varNames = new Set<string>();

  constructor(
    private readonly text: string,
    private readonly lc: LineCounter,
    readonly problems: ProblemList,
    private readonly env: Env,
    readonly secrets: SecretSet,
    private readonly options: ReaderOptions = {},
  ) {}

  /** With `vocabularies`: the problem `check` finds (a value outside a closed list) is an error at `at`; `shipped`: a list only `true` checks. */
  vocabulary(at: Position, check: () => string | undefined, o: { shipped?: boolean } = {}): void {
    if (!this.options.vocabularies || (o.shipped === true && this.options.vocabularies !== true)) return;
    const problem = check();
    if (problem) this.problems.add(at, problem);
  }

  posOf(offset: number): Position {
    const p = this.lc.linePos(offset);
    return { line: p.line, column: p.col };
  }

  at(node: YNode, fallback?: Position): Position {
    return node?.range ? this.posOf(node.range[0]) : (fallback ?? { line: 1, column: 1 });
  }

  /**
   * A map's entries by key; unknown keys are warned about (the platform tool knows more fields than this
   * service), or are errors where the shape is closed (the reason): ignoring one would build a different machine.
   */
  map<S extends Shape>(node: YNode, what: string, shape: S, fallback?: Position): MapView<S> | undefined {
    if (!isMap(node)) {
      this.problems.add(this.at(node, fallback), `${what || 'the declaration'} must be a mapping`);
      return undefined;
    }
    const entries = new Map<string, Pair<unknown, unknown>>();
    const known = Object.keys(shape.fields);
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
      if (key === undefined) {
        this.problems.add(this.at(pair.key as YNode, this.at(node)), `${what || 'the declaration'}: keys must be plain names`);
        continue;
      }
      if (!known.includes(key)) this.unknownKey(key, what, known, this.at(pair.key as YNode), shape.closed);
      entries.set(key, pair);
    }
    return new MapView(this, what, shape, this.at(node), entries);
  }

  /**
   * A key this project does not read: named as the platform tool's when it is one of its keys, with the
   * known key a typo most likely meant. A warning, or an error with `strict` (the place's reason) or in
   * strict mode, where the file must say only what will be done.
   */
  private unknownKey(key: string, what: string, known: readonly string[], at: Position, strict: string | undefined): void {
    const where = `field ${echo(key)} in ${what || 'the declaration'}`;
    const platform = platformOnlyKey(what, key);
    const near = platform ? undefined : nearMiss(key, known);
    const hint = near ? `; did you mean "${near}"?` : '';
    const error = strict !== undefined || this.options.strict === true;
    if (platform) {
      this.problems.add(at, `${where} is a key of the platform tool's format that appliance-forge does not support (${platform})${error ? '' : ': ignored'}`, error ? 'error' : 'warning');
    } else if (strict) {
      this.problems.add(at, `unsupported ${where}: ${strict}${hint}`);
    } else {
      this.problems.add(at, `unknown ${where}${error ? '' : ' (ignored)'}${hint}`, error ? 'error' : 'warning');
    }
  }

  /** A list's items; a missing list is an empty one. */
  seq(node: YNode, what: string, fallback: Position): YNode[] {
    if (node === undefined || node === null || (isScalar(node) && node.value === null)) return [];
    if (!isSeq(node)) {
      this.problems.add(this.at(node, fallback), `${what} must be a list`);
      return [];
    }
    return node.items as YNode[];
  }

  /**
   * Text of a scalar, with `${env:…}` and `${var:…}` references replaced. A number or boolean keeps the text it
   * was written as (`version: 1.0` is "1.0", not "1").
   */
  scalarText(node: YNode, what: string, fallback: Position): string | undefined {
    if (!isScalar(node)) {
      this.problems.add(this.at(node, fallback), `${what} must be a text value`);
      return undefined;
    }
    const raw = typeof node.value === 'string' ? node.value : node.value === null ? '' : (node.source ?? String(node.value));
    if (!raw.includes('${')) return raw;
    const r = interpolateEnv(raw, this.env, this.options.vars);
    for (const n of r.names) this.envNames.add(n);
    for (const n of r.varNames) this.varNames.add(n);
    const start = node.range?.[0] ?? 0;
    const rawSource = this.text.slice(start, node.range?.[1] ?? start);
    for (const p of r.problems) {
      // Point at the reference itself when it can be found in the source text.
      const ref = raw.slice(p.offset).match(/^\$\{[^}]*\}/)?.[0];
      const idx = ref ? rawSource.indexOf(ref) : -1;
      const lenient = p.unset !== undefined && this.options.envOptional === true;
      this.problems.add(idx >= 0 ? this.posOf(start + idx) : this.at(node, fallback), `${what}: ${p.message}${lenient ? ' (plan and apply will need it)' : ''}`, lenient ? 'warning' : 'error');
    }
    return r.problems.length ? undefined : r.value;
  }
}

/**
 * A map read through its shape (declaration-format.ts): which keys are required, minimums, checks and
 * defaults come from there, and each read method takes only the keys of its kind.
 */
export class MapView<S extends Shape = Shape> {
  /**
   * Keys whose values land in fields the model marks secret (the shape's `model`): secrets, masked
   * wherever they go (written in the file or read from `${env:…}`); other values are not.
   */
  private readonly secretKeys: ReadonlySet<string>;

  constructor(
    private readonly r: YamlReader,
    readonly what: string,
    readonly shape: S,
    readonly at: Position,
    private readonly entries: Map<string, Pair<unknown, unknown>>,
  ) {
    this.secretKeys = new Set(shape.model ? secretsOf(shape.model) : []);
  }

  private spec(key: string): FieldSpec | undefined {
    return Object.prototype.hasOwnProperty.call(this.shape.fields, key) ? this.shape.fields[key] : undefined;
  }

  has(key: string): boolean {
    const v = this.node(key);
    return v !== undefined && !(isScalar(v) && v.value === null);
  }

  node(key: string): YNode {
    const p = this.entries.get(key);
    return p ? ((p.value as YNode) ?? null) : undefined;
  }

  keys(): string[] {
    return [...this.entries.keys()];
  }

  /** Position of a key, or of the map when it is absent. */
  keyAt(key: string): Position {
    const p = this.entries.get(key);
    return p ? this.r.at(p.key as YNode, this.at) : this.at;
  }

  /** Position of a value, or of its key when the value is empty. */
  valueAt(key: string): Position {
    return this.r.at(this.node(key), this.keyAt(key));
  }

  private label(key: string): string {
    return this.what ? `${this.what}.${key}` : key;
  }

  /** Whether the key is there; a required one that is not is reported (with the shape's hint). */
  need(key: KeyOf<S, 'map' | 'list'>): boolean {
    if (this.has(key)) return true;
    const spec = this.spec(key) as MapSpec | { required?: boolean; hint?: string };
    if (spec.required) this.r.problems.add(this.keyAt(key), `${this.label(key)} is required${'hint' in spec && spec.hint ? `: ${spec.hint}` : ''}`);
    return false;
  }

  /** Text (the text form of an `either`); the shape's default when absent, its check when present. */
  str(key: KeyOf<S, 'text' | 'either'>): string | undefined {
    const s = this.spec(key);
    const spec: TextSpec | undefined = s?.kind === 'text' ? s : s?.kind === 'either' ? s.of.find((o): o is TextSpec => o.kind === 'text') : undefined;
    if (!this.has(key)) {
      if (spec?.required) this.r.problems.add(this.keyAt(key), `${this.label(key)} is required`);
      return spec?.default;
    }
    const v = this.r.scalarText(this.node(key), this.label(key), this.keyAt(key));
    if (this.secretKeys.has(key)) this.r.secrets.add(v);
    // Unreadable (reported; a warning for an unset variable under `validate`): the default keeps the rest read.
    if (v === undefined) return spec?.default;
    if (spec?.required && v.trim() === '') {
      this.r.problems.add(this.valueAt(key), `${this.label(key)} must not be empty`);
      return undefined;
    }
    if (spec?.check && !spec.check.test(v)) {
      this.r.problems.add(this.valueAt(key), `${this.label(key)} must be ${spec.check.says}`);
      return undefined;
    }
    return v;
  }

  /** A whole number ≥ the shape's minimum; also read from a text such as an environment value. */
  int(key: KeyOf<S, 'int'>): number | undefined {
    if (!this.has(key)) return undefined;
    const s = this.spec(key);
    const min = s?.kind === 'int' ? s.min : 0;
    const node = this.node(key);
    let v: unknown = isScalar(node) ? node.value : undefined;
    if (typeof v === 'string') {
      const t = this.r.scalarText(node, this.label(key), this.keyAt(key));
      if (t === undefined) return undefined;
      v = /^\s*\d+\s*$/.test(t) ? Number(t) : NaN;
    }
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min) {
      // No value in the message: it may have come from a secret.
      this.r.problems.add(this.valueAt(key), `${this.label(key)} must be a whole number of at least ${min}`);
      return undefined;
    }
    return v;
  }

  bool(key: KeyOf<S, 'bool'>): boolean | undefined {
    const s = this.spec(key);
    if (!this.has(key)) return s?.kind === 'bool' ? s.default : undefined;
    const node = this.node(key);
    let v: unknown = isScalar(node) ? node.value : undefined;
    if (typeof v === 'string') {
      const t = this.r.scalarText(node, this.label(key), this.keyAt(key))?.trim().toLowerCase();
      v = t === 'true' ? true : t === 'false' ? false : undefined;
    }
    if (typeof v !== 'boolean') {
      this.r.problems.add(this.valueAt(key), `${this.label(key)} must be true or false`);
      return undefined;
    }
    return v;
  }

  map<K extends KeyOf<S, 'map'>>(key: K): MapView<ChildOf<S, K>> | undefined {
    const spec = this.spec(key) as MapSpec<ChildOf<S, K>>;
    return this.r.map(this.node(key), this.label(key), spec.shape, this.keyAt(key));
  }

  seq(key: KeyOf<S, 'list' | 'either'>): YNode[] {
    return this.r.seq(this.node(key), this.label(key), this.keyAt(key));
  }
}
