// What a command is: arguments in, an exit code out (0 ok, 1 failure, 2 usage), and its help text.
export type Command = (args: readonly string[]) => Promise<number>;

export interface CommandModule {
  readonly run: Command;
  /** Printed for `--help` / `-h` (exit 0), whatever else the arguments hold. */
  readonly help: string;
}

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The default data dir of the server commands. */
export const DEFAULT_DATA_DIR = './.appliance-forge';
