// The values of `${var:NAME}` (env-refs.ts), as Packer and Terraform take them: `--var NAME=VALUE` and
// `--var-file FILE` on the command line, the `vars` and `var-files` inputs of the Action. Files are read
// in order, then the assignments in order, and a later value wins: an assignment wins over every file.
import { isMap, isScalar, parseDocument } from 'yaml';
import { REF_NAME, type Vars } from './env-refs';
import { UsageError } from './errors';
import { readTextFile } from './text-file';

/** A `--var` that is not NAME=VALUE, a var file that cannot be read or is not a map of names to values. */
export class VarsError extends UsageError {
  static override readonly code = 'E_VARS';
  constructor(message: string) {
    super(message);
    this.name = 'VarsError';
  }
}

/** How the caller names its two sources in messages: `--var` / `--var-file`, or the Action's inputs. */
export interface VarsLabels {
  readonly assignment: string;
  readonly file: string;
}

export const CLI_VARS_LABELS: VarsLabels = { assignment: '--var', file: '--var-file' };

const NAME_RULE = 'a name is a letter or _ followed by letters, digits or _';

/** `NAME=VALUE` (the value may hold `=` and be empty). A value is never echoed: it may be a secret. */
export function parseVarAssignment(text: string, label = CLI_VARS_LABELS.assignment): [string, string] {
  const eq = text.indexOf('=');
  if (eq < 0) throw new VarsError(`${label} takes NAME=VALUE (no "=" in the one given)`);
  const name = text.slice(0, eq);
  if (!REF_NAME.test(name)) throw new VarsError(`${label} ${JSON.stringify(name.slice(0, 60))}=…: ${NAME_RULE}`);
  return [name, text.slice(eq + 1)];
}

/** A YAML or JSON map of names to text, numbers or booleans (a number keeps the text it was written as). */
export function readVarFile(file: string, label = CLI_VARS_LABELS.file): Record<string, string> {
  // The one bounded reader of declarations: a var file of the Action may come from a checkout.
  const read = readTextFile(file);
  if (!('text' in read)) throw new VarsError(`${label} ${file}: ${read.problem}`);
  const { text } = read;
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: false });
  const bad = (what: string) => new VarsError(`${label} ${file}: ${what}`);
  const err = doc.errors[0];
  if (err) throw bad(`not YAML or JSON (line ${err.linePos?.[0].line ?? '?'}: ${err.message.split('\n')[0]!.slice(0, 100)})`);
  const root = doc.contents;
  if (root === null || (isScalar(root) && root.value === null)) return {};
  if (!isMap(root)) throw bad('must be a map of NAME: value');
  const out: Array<[string, string]> = [];
  for (const pair of root.items) {
    const name = isScalar(pair.key) ? String(pair.key.value) : '';
    if (!REF_NAME.test(name)) throw bad(`key ${JSON.stringify(name.slice(0, 60))}: ${NAME_RULE}`);
    const v = pair.value;
    if (!isScalar(v) || v.value === null) throw bad(`${name} must be a text, a number or a boolean`);
    out.push([name, typeof v.value === 'string' ? v.value : (v.source ?? String(v.value))]);
  }
  return Object.fromEntries(out);
}

/** The files' maps, then the assignments, merged: later wins. */
export function collectVars(
  o: { readonly files?: readonly string[] | undefined; readonly assignments?: readonly string[] | undefined },
  labels: VarsLabels = CLI_VARS_LABELS,
): Vars {
  // fromEntries defines own properties: a name such as __proto__ stays a plain key.
  return Object.fromEntries([
    ...(o.files ?? []).flatMap((f) => Object.entries(readVarFile(f, labels.file))),
    ...(o.assignments ?? []).map((a) => parseVarAssignment(a, labels.assignment)),
  ]);
}
