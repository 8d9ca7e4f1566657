// The model's secret flag produces the one redaction used everywhere: server responses and logs,
// client error messages, provider outputs and the Action's masks (style example 4).
import { type AnyModel, fieldsOf, type Fields, presentFields } from './schema';
import { documents, type DocumentOf, type DocumentRoot } from './resources';

type Rec = Record<string, unknown>;

/** A copy of a record without its secret fields, at any depth. */
export function redact<R extends DocumentRoot>(root: R, value: DocumentOf<R>): DocumentOf<R> {
  return redactRecord(documents[root], value);
}

export function redactRecord(m: AnyModel, v: Rec): Rec {
  const out: Rec = { ...v };
  for (const [name, f, fv] of presentFields(m, v.kind as string | undefined, v)) {
    if (f.secret) delete out[name];
    else if (f.t === 'object') out[name] = redactRecord(f.model(), fv as Rec);
    else if (f.t === 'list') out[name] = (fv as Rec[]).map((x) => redactRecord(f.model(), x));
  }
  return out;
}

/** Every secret string in a record (for masking logs and outputs). */
export function secretsIn(m: AnyModel, v: Rec, into: string[] = []): string[] {
  for (const [, f, fv] of presentFields(m, v.kind as string | undefined, v)) {
    if (f.secret && typeof fv === 'string' && fv !== '') into.push(fv);
    else if (f.t === 'object') secretsIn(f.model(), fv as Rec, into);
    else if (f.t === 'list') for (const x of fv as Rec[]) secretsIn(f.model(), x, into);
  }
  return into;
}

/** The names of the secret fields of a model, at any depth and in every kind (`password`, `secretKey`). */
export function secretFieldNames(models: Iterable<AnyModel>): Set<string> {
  const names = new Set<string>();
  const seen = new Set<AnyModel>();
  const walk = (m: AnyModel): void => {
    if (seen.has(m)) return;
    seen.add(m);
    for (const kind of m.kinds ? Object.keys(m.kinds) : [undefined]) {
      for (const [name, f] of fieldsOf(m, kind)) {
        if (f.secret) names.add(name);
        if (f.t === 'object' || f.t === 'list') walk(f.model());
      }
    }
  };
  for (const m of models) walk(m);
  return names;
}

/** Whether a record of this model can carry a secret somewhere inside (an install profile's passwords). */
export const holdsSecret = (m: AnyModel): boolean => secretFieldNames([m]).size > 0;

/** The secret fields of one table of fields (its own level only). */
export const secretsOf = (fields: Fields): string[] => Object.entries(fields).filter(([, f]) => f.secret).map(([name]) => name);

export const MASK = '***';

/** Secrets shorter than this are not masked: masking a one- or two-letter value would blank out ordinary text. */
export const MIN_SECRET_LENGTH = 3;

/**
 * Every occurrence of every known secret in a text replaced by `***`, longest first (a secret may
 * contain another); values shorter than MIN_SECRET_LENGTH are left alone. The one masker of client
 * errors, OpenStack errors and the engine's output.
 */
export function maskSecrets(text: string, secrets: Iterable<string>): string {
  let out = text;
  const list = [...secrets].filter((s) => s.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
  for (const s of list) out = out.split(s).join(MASK);
  return out;
}
