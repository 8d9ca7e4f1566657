// The field DSL. A resource is data: its root element, its XSD type, its fields in the schema's
// sequence order (wire contract §2: "canonical order out"). The XML and JSON codecs, the TypeScript
// types, redaction, the client and the server all walk these descriptions; no field is written twice.

export type ScalarType = 'string' | 'boolean' | 'int' | 'long' | 'dateTime' | 'uri';

interface FieldBase {
  /** Write-only: accepted on input, never emitted by the server, never logged (wire contract §9). */
  readonly secret?: boolean;
  /**
   * A schema field this service cannot honour: the reason. Decoding a document that carries it is
   * a 400 naming the field (never a silent drop); it is never written.
   */
  readonly unsupported?: string;
}

export interface ScalarField<T = unknown> extends FieldBase {
  readonly t: 'scalar';
  readonly type: ScalarType;
  /** XSD enumeration, where the schema restricts the value. */
  readonly values?: readonly string[];
  /** Phantom: the TypeScript type of the value. */
  readonly __type?: T;
}

/** XSD `UriList`: `<x><uri>…</uri>…</x>`; in TypeScript a `string[]`. */
export interface UriListField extends FieldBase {
  readonly t: 'uriList';
}

/** A nested record (`<targetFormat>…</targetFormat>`). */
export interface ObjectField<M extends AnyModel = AnyModel> extends FieldBase {
  readonly t: 'object';
  readonly model: () => M;
}

/** A wrapper of repeated items (`<mySoftwareList><mySoftware/>…</mySoftwareList>`); in TypeScript an array. */
export interface ListField<M extends AnyModel = AnyModel> extends FieldBase {
  readonly t: 'list';
  readonly item: string;
  readonly model: () => M;
}

export type Field = ScalarField | UriListField | ObjectField | ListField;
export type Fields = Readonly<Record<string, Field>>;

export interface Model<F extends Fields = Fields, K extends Readonly<Record<string, Fields>> = Readonly<Record<string, Fields>>> {
  /** Root element name when the record is a document of its own. */
  readonly root: string;
  /** Type name in uforge.xsd, for the schema-drift test. */
  readonly xsdType: string;
  readonly fields: F;
  /**
   * Concrete `xsi:type` kinds of a polymorphic type and the fields each adds after the base fields.
   * The first kind is the default one written when a record carries none.
   */
  readonly kinds?: K;
  /** The base type is abstract: `xsi:type` is always written (credAccount, publishImage, distribProfile). */
  readonly abstract?: boolean;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- only used as a constraint
export type AnyModel = Model<any, any>;

type Opts = { readonly secret?: boolean };

export const str = (o: Opts = {}): ScalarField<string> => ({ t: 'scalar', type: 'string', ...o });
export const oneOf = <const V extends readonly string[]>(values: V): ScalarField<V[number]> & { readonly values: V } => ({
  t: 'scalar',
  type: 'string',
  values,
});
/** A field of the schema the service refuses (see `FieldBase.unsupported`); never settable in TypeScript. */
export const refused = (reason: string): ScalarField<never> => ({ t: 'scalar', type: 'string', unsupported: reason });
export const bool = (): ScalarField<boolean> => ({ t: 'scalar', type: 'boolean' });
export const int = (): ScalarField<number> => ({ t: 'scalar', type: 'int' });
export const long = (): ScalarField<number> => ({ t: 'scalar', type: 'long' });
/** ISO-8601 UTC with milliseconds (wire contract §2). */
export const date = (): ScalarField<string> => ({ t: 'scalar', type: 'dateTime' });
/** A URI relative to the base URL, without a leading slash (spec "Resource URIs"). */
export const uri = (): ScalarField<string> => ({ t: 'scalar', type: 'uri' });
export const uris = (): UriListField => ({ t: 'uriList' });
export const obj = <M extends AnyModel>(model: () => M): ObjectField<M> => ({ t: 'object', model });
export const list = <M extends AnyModel>(item: string, model: () => M): ListField<M> => ({ t: 'list', item, model });

export function model<const F extends Fields, const K extends Readonly<Record<string, Fields>> = {}>(m: {
  root: string;
  xsdType: string;
  fields: F;
  kinds?: K;
  abstract?: boolean;
}): Model<F, K> {
  return m;
}

/** The names of a field table, typed (for lists derived from the model instead of written again). */
export function namesOf<F extends Fields>(fields: F): Array<keyof F & string> {
  return Object.keys(fields);
}

// ---- Types inferred from the descriptions -------------------------------------------------------

/**
 * Models whose records have a name (resources.ts adds each: `appliance: [typeof appliance, Appliance]`): a field
 * holding such a record has that type, so an editor shows `Appliance`, not the fields of its inferred type.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface NamedModels {}

/** The named type of a model's records, or its inferred type when it has none. */
type RecordOf<M> = {
  [N in keyof NamedModels]: NamedModels[N] extends readonly [infer NM, infer T] ? ([M] extends [NM] ? ([NM] extends [M] ? T : never) : never) : never;
}[keyof NamedModels] extends infer Named
  ? [Named] extends [never] ? Infer<M> : Named
  : never;

type ValueOf<F> = F extends ScalarField<infer T>
  ? T
  : F extends UriListField
    ? string[]
    : F extends ListField<infer M>
      ? Array<RecordOf<M>>
      : F extends ObjectField<infer M>
        ? RecordOf<M>
        : never;

export type InferFields<F> = { -readonly [P in keyof F]?: ValueOf<F[P]> | undefined };

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

type KindPart<K> = [keyof K] extends [never]
  ? {}
  : { /** The concrete `xsi:type` (local name). */ kind?: keyof K & string } & Partial<
      UnionToIntersection<{ [P in keyof K]: InferFields<K[P]> }[keyof K]>
    >;

/** The TypeScript type of a record of a model: every field optional, as in the schema (minOccurs=0); an undefined field is not written. */
export type Infer<M> = M extends Model<infer F, infer K> ? InferFields<F> & KindPart<K> : never;

/** All fields of a model for a given kind, in canonical order: base fields first, then the kind's own. */
export function fieldsOf(m: AnyModel, kind?: string): ReadonlyArray<readonly [string, Field]> {
  const k = m.kinds ? (kind ?? Object.keys(m.kinds)[0]) : undefined;
  // Memoized: the codecs walk these for every record they write or read.
  let byKind = fieldCache.get(m);
  if (!byKind) fieldCache.set(m, (byKind = new Map()));
  let out = byKind.get(k);
  if (!out) {
    const base = Object.entries(m.fields as Fields);
    const extra = k === undefined ? undefined : (m.kinds as Record<string, Fields>)[k];
    out = Object.freeze(extra ? base.concat(Object.entries(extra)) : base);
    byKind.set(k, out);
  }
  return out;
}

const fieldCache = new WeakMap<AnyModel, Map<string | undefined, ReadonlyArray<readonly [string, Field]>>>();

/** Whether `kind` is one of a polymorphic model's kinds. */
export function hasKind(m: AnyModel, kind: string): boolean {
  return !!m.kinds && Object.prototype.hasOwnProperty.call(m.kinds, kind);
}

export function defaultKind(m: AnyModel): string | undefined {
  return m.kinds ? Object.keys(m.kinds)[0] : undefined;
}

/** The kind a record is written as: the one forced by its root element, its own, or the model's default. */
export function kindToWrite(m: AnyModel, v: Readonly<Record<string, unknown>>, path: string, forced?: string): string | undefined {
  if (!m.kinds) return undefined;
  const kind = forced ?? (v.kind as string | undefined) ?? defaultKind(m);
  if (!hasKind(m, kind!)) throw new TypeError(`${path}: unknown kind ${String(kind)}`);
  return kind;
}

/** The fields of a record that hold a value, in canonical order, with their values. */
export function* presentFields(m: AnyModel, kind: string | undefined, v: Readonly<Record<string, unknown>>): Generator<[string, Field, unknown]> {
  for (const [name, f] of fieldsOf(m, kind)) {
    const fv = v[name];
    if (fv !== undefined && fv !== null) yield [name, f, fv];
  }
}
