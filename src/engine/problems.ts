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
  readonly code = 'E_DECLARATION' as const;
  constructor(readonly problems: readonly Problem[]) {
    const errors = problems.filter((p) => p.severity === 'error');
    super(
      `${errors.length} problem${errors.length === 1 ? '' : 's'} in the declaration:\n` +
        errors.map(formatProblem).join('\n'),
    );
    this.name = 'DeclarationError';
  }
}

export function formatProblem(p: Problem): string {
  return `${p.file}:${p.line}:${p.column}: ${p.severity}: ${p.message}`;
}

/** Collects problems for one file; the order of the report is the order of the file. */
export class ProblemList {
  readonly items: Problem[] = [];
  constructor(readonly file: string) {}

  add(at: Position | undefined, message: string, severity: Severity = 'error'): void {
    this.items.push({ file: this.file, line: at?.line ?? 1, column: at?.column ?? 1, severity, message });
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
