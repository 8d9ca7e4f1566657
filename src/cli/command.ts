// What a command is: arguments in, an exit code out (0 ok, 1 failure, 2 usage), its help text and the
// options it parses (the completion scripts are generated from them).
import type { ParseArgsConfig } from 'node:util';

export type Command = (args: readonly string[]) => Promise<number>;

/** The options of a command, as `parseArgs` takes them. */
export type OptionTable = NonNullable<ParseArgsConfig['options']>;

export interface CommandModule {
  readonly run: Command;
  /** Printed for `--help` / `-h` (exit 0), whatever else the arguments hold. */
  readonly help: string;
  /** The options `run` parses: one object for both. */
  readonly options: OptionTable;
  /** The words its first argument takes, when it is one of a few (`users add`, `completion bash`). */
  readonly words?: readonly string[];
}

/** The command table of main.ts: each command loaded only when called. */
export type CommandTable = Readonly<Record<string, { readonly summary: string; readonly load: () => Promise<CommandModule> }>>;

// The command line was used wrongly (exit code 2): the engine's class, which failure.ts and the Action share.
export { UsageError } from '../engine/errors';

/** The default data dir of the server commands. */
export const DEFAULT_DATA_DIR = './.appliance-forge';
