// Offline validation, one report for `appliance-forge validate` and the Action's `mode: validate`:
// the schema, the bundle files, the `${env:NAME}` and `${var:NAME}` names (an unset one is reported, not fatal), unknown
// fields (errors with `strict`) and the platform tool's keys this project does not support. No
// service, no credentials: a pull request from a fork has none.
import type { Vars } from './env-refs';
import { parseDeclarationFile } from './parse';
import { listProblems, type Problem } from './problems';
import { SecretSet } from './secrets';

export interface ValidationReport {
  readonly ok: boolean;
  /** What the check ran against: no service (plan and apply documents name their URL, or `embedded`). */
  readonly target: null;
  readonly file: string;
  readonly errors: number;
  readonly warnings: number;
  /** The first problems (problems.ts PROBLEMS_LISTED), values read from the environment masked in the messages. */
  readonly problems: readonly Problem[];
  /** How many problems are not listed; absent when every one is. */
  readonly more?: number;
  /** The `${env:NAME}` variables the file reads. */
  readonly env: readonly string[];
  /** The `${var:NAME}` variables the file reads. */
  readonly vars: readonly string[];
}

export function validateDeclarationFile(file: string, options: { strict?: boolean; allowOutsideSources?: boolean; vars?: Vars } = {}): ValidationReport {
  const r = parseDeclarationFile(file, { strict: options.strict === true, envOptional: true, vocabularies: true, allowOutsideSources: options.allowOutsideSources, vars: options.vars });
  const secrets = new SecretSet();
  secrets.addAll(r.declaration?.secrets ?? []);
  const problems = r.problems.map((p) => ({ ...p, message: secrets.mask(p.message) }));
  const errors = problems.filter((p) => p.severity === 'error').length;
  return { ok: errors === 0, target: null, file, errors, warnings: problems.length - errors, ...listProblems(problems), env: r.envNames ?? [], vars: r.varNames ?? [] };
}
