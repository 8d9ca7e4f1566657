// Problems found in a declaration file. Validation collects every one before failing, each with
// file, line and column (declaration.md "The project's additions"), so that the Action can turn
// them into annotations and the command line can print them all at once.
import { ForgeError } from '../errors';

/** 1-based line and column, as editors and GitHub annotations count them. */
export interface Position {
  readonly line: number;
  readonly column: number;
}

export type Severity = 'error' | 'warning';

export interface Problem extends Position {
  readonly file: string;
  readonly severity: Severity;
  readonly message: string;
}

/** The declaration is invalid (syntax, schema, missing variables or references the service cannot resolve). */
export class DeclarationError extends ForgeError {
  static readonly code = 'E_DECLARATION';
  constructor(readonly problems: readonly Problem[]) {
    const errors = problems.filter((p) => p.severity === 'error');
    super([`${errors.length} problem${errors.length === 1 ? '' : 's'} in the declaration:`, ...formatProblems(errors)].join('\n'));
    this.name = 'DeclarationError';
  }
}

export function formatProblem(p: Problem): string {
  return `${p.file}:${p.line}:${p.column}: ${p.severity}: ${p.message}`;
}

/**
 * How many problems a report lists (text, JSON, annotations): past the first few, a file is seldom a
 * declaration at all (a README, a log), and what follows is noise. The others are counted.
 */
export const PROBLEMS_LISTED = 20;

/** The problems a report lists, and how many it leaves out (absent when none). */
export interface ProblemListing {
  readonly problems: readonly Problem[];
  readonly more?: number;
}

export function listProblems(problems: readonly Problem[]): ProblemListing {
  const more = problems.length - PROBLEMS_LISTED;
  return more > 0 ? { problems: problems.slice(0, PROBLEMS_LISTED), more } : { problems };
}

/** One line per problem, the first PROBLEMS_LISTED of them, then one that counts the others (`more` left out before). */
export function formatProblems(problems: readonly Problem[], more = 0): string[] {
  const left = Math.max(0, problems.length - PROBLEMS_LISTED) + more;
  const lines = problems.slice(0, PROBLEMS_LISTED).map(formatProblem);
  if (left > 0) lines.push(`… and ${left} more problem${left === 1 ? '' : 's'}`);
  return lines;
}

/** The longest message kept: what a message quotes is cut where it is written (error-text.ts `echo`); this bounds the rest. */
const MESSAGE_CHARS = 400;

/** One line of at most MESSAGE_CHARS: a line break in a message would break the `file:line:column:` form. */
function oneLine(message: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what it replaces
  const flat = message.replace(/[\u0000-\u001f\u007f]+/g, ' ');
  return flat.length > MESSAGE_CHARS ? `${flat.slice(0, MESSAGE_CHARS - 1)}…` : flat;
}

/** Collects problems for one file; the order of the report is the order of the file. */
export class ProblemList {
  readonly items: Problem[] = [];
  constructor(readonly file: string) {}

  add(at: Position | undefined, message: string, severity: Severity = 'error'): void {
    this.items.push({ file: this.file, line: at?.line ?? 1, column: at?.column ?? 1, severity, message: oneLine(message) });
  }

  get hasErrors(): boolean {
    return this.items.some((p) => p.severity === 'error');
  }

  sorted(): Problem[] {
    return [...this.items].sort((a, b) => a.line - b.line || a.column - b.column);
  }

  /** Throws a DeclarationError when any problem is an error. */
  throwIfErrors(): void {
    if (this.hasErrors) throw new DeclarationError(this.sorted());
  }

  /** Throws the DeclarationError of the problems so far (the caller has just added an error). */
  throwErrors(): never {
    throw new DeclarationError(this.sorted());
  }
}
