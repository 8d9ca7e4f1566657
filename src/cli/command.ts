// What a command is: arguments in, an exit code out (0 ok, 1 failure, 2 usage), and its help text.
import { ForgeError } from '../errors';

export type Command = (args: readonly string[]) => Promise<number>;

export interface CommandModule {
  readonly run: Command;
  /** Printed for `--help` / `-h` (exit 0), whatever else the arguments hold. */
  readonly help: string;
}

/** The command line was used wrongly (exit code 2): an unknown option, a missing argument. */
export class UsageError extends ForgeError {
  readonly code = 'E_USAGE' as const;
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The default data dir of the server commands. */
export const DEFAULT_DATA_DIR = './.appliance-forge';
