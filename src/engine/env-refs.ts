// `${env:NAME}` and `${var:NAME}` references (declaration.md "The project's additions"): secrets come
// from CI secrets, never sit in the file; variables come from `--var` / `--var-file` (the Action's
// `vars` / `var-files`, engine/vars.ts), as Packer's and Terraform's do. A value is masked when it
// lands in a field the model marks secret (yaml-reader.ts), not for being read this way: masking
// `Default` would star the word in a whole log.

const REF = /\$\{(env|var):([^}]*)\}/g;
/** The name in a reference, and of a variable given to `${var:…}`. */
export const REF_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export type Env = Readonly<Record<string, string | undefined>>;
/** The values of `${var:NAME}`, by name. */
export type Vars = Readonly<Record<string, string>>;

type Kind = 'env' | 'var';

/** What an unset reference of each kind is called, and where its value comes from. */
const UNSET: Readonly<Record<Kind, (name: string) => string>> = {
  env: (name) => `environment variable ${name} is not set`,
  var: (name) => `variable ${name} is not set: give it with --var ${name}=VALUE or --var-file, or the Action's vars or var-files input`,
};

export interface EnvProblem {
  /** Offset of the reference inside the text. */
  readonly offset: number;
  readonly message: string;
  /** The variable's name, when the problem is that it is unset or empty. */
  readonly unset?: string;
}

export interface Interpolated {
  readonly value: string;
  /** The values read from the environment and the variables. */
  readonly read: readonly string[];
  /** The environment variables named, set or not. */
  readonly names: readonly string[];
  /** The `${var:…}` variables named, set or not. */
  readonly varNames: readonly string[];
  readonly problems: readonly EnvProblem[];
}

/**
 * Replaces each reference by its value. A value that is unset or empty is a problem that names it
 * (an unset GitHub secret arrives as an empty string, and publishing with an empty password would
 * fail far later with a worse message).
 */
export function interpolateEnv(text: string, env: Env, vars: Vars = {}): Interpolated {
  const read: string[] = [];
  const names: Record<Kind, string[]> = { env: [], var: [] };
  const problems: EnvProblem[] = [];
  const value = text.replace(REF, (whole, kind: Kind, name: string, offset: number) => {
    if (!REF_NAME.test(name)) {
      problems.push({ offset, message: `malformed reference "${whole}": expected \${${kind}:NAME}` });
      return '';
    }
    names[kind].push(name);
    const v = kind === 'env' ? env[name] : Object.prototype.hasOwnProperty.call(vars, name) ? vars[name] : undefined;
    if (v === undefined || v === '') {
      problems.push({ offset, message: UNSET[kind](name), unset: name });
      return '';
    }
    read.push(v);
    return v;
  });
  return { value, read, names: names.env, varNames: names.var, problems };
}
