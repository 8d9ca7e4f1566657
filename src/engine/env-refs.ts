// `${env:NAME}` references (declaration.md "The project's additions"): secrets come from CI
// secrets, never sit in the file. A value is masked when it lands in a field the model marks secret
// (yaml-reader.ts), not for being read this way: masking `Default` would star the word in a whole log.

const REF = /\$\{env:([^}]*)\}/g;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export type Env = Readonly<Record<string, string | undefined>>;

export interface EnvProblem {
  /** Offset of the reference inside the text. */
  readonly offset: number;
  readonly message: string;
  /** The variable's name, when the problem is that it is unset or empty. */
  readonly unset?: string;
}

export interface Interpolated {
  readonly value: string;
  /** The values read from the environment. */
  readonly read: readonly string[];
  /** The variables named, set or not. */
  readonly names: readonly string[];
  readonly problems: readonly EnvProblem[];
}

/**
 * Replaces each reference by its variable. A variable that is unset or empty is a problem that
 * names it (an unset GitHub secret arrives as an empty string, and publishing with an empty
 * password would fail far later with a worse message).
 */
export function interpolateEnv(text: string, env: Env): Interpolated {
  const read: string[] = [];
  const names: string[] = [];
  const problems: EnvProblem[] = [];
  const value = text.replace(REF, (whole, name: string, offset: number) => {
    if (!NAME.test(name)) {
      problems.push({ offset, message: `malformed environment reference "${whole}": expected \${env:NAME}` });
      return '';
    }
    names.push(name);
    const v = env[name];
    if (v === undefined || v === '') {
      problems.push({ offset, message: `environment variable ${name} is not set`, unset: name });
      return '';
    }
    read.push(v);
    return v;
  });
  return { value, read, names, problems };
}
