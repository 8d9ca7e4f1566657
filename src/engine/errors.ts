// The engine's errors that the failure formatter (failure.ts) tells apart. A light module (the command
// line's entry loads failure.ts for every command): nothing here loads the client or the steps.
import { ForgeError, messageOf } from '../errors';

/**
 * The caller's input is wrong (exit code 2 on the command line): an unknown option, a missing argument.
 * The engine's own cases extend it: settings that cannot work together, `--var`, `--only`.
 */
export class UsageError extends ForgeError {
  // Typed `string`: the classes below it have codes of their own.
  static readonly code: string = 'E_USAGE';
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Some tasks of an apply failed; the others ran to their end. `partial`: the result so far (an `ApplyResult`), when there is one. */
export class ApplyError extends ForgeError {
  static readonly code = 'E_APPLY';
  constructor(
    readonly failures: ReadonlyArray<{ readonly what: string; readonly error: unknown }>,
    readonly partial?: unknown,
  ) {
    super(`apply failed:\n${failures.map((f) => `  ${f.what}: ${messageOf(f.error)}`).join('\n')}`);
    this.name = 'ApplyError';
  }
}
