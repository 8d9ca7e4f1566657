// How the commands of plan, apply and destroy meet their process: the output streams, the environment,
// the interruption signals and the terminal that confirms a destroy. Tests pass their own.
import { createInterface } from 'node:readline';
import type { Out } from './progress';

export interface CliIo {
  readonly stdout: Out;
  readonly stderr: Out;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** SIGINT and SIGTERM; tests pass their own. */
  readonly onInterrupt?: (abort: () => void) => () => void;
  /** Asks a person (a terminal on stdin): true only for `yes`. Absent: no one to ask. */
  readonly confirm?: (question: string) => Promise<boolean>;
}

/** Asks on the terminal; Ctrl-C or the end of input is a no. */
function askOnTerminal(question: string): Promise<boolean> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    let answered = false;
    const done = (yes: boolean) => {
      if (answered) return;
      answered = true;
      rl.close();
      resolve(yes);
    };
    rl.on('SIGINT', () => done(false));
    rl.on('close', () => done(false));
    rl.question(question, (a) => done(a.trim() === 'yes'));
  });
}

export const processIo = (): CliIo => ({
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  onInterrupt: (abort) => {
    let count = 0;
    const h = () => {
      // The first signal cancels the running jobs; a second one leaves at once.
      if (++count > 1) process.exit(130);
      process.stderr.write('\ninterrupted: cancelling running jobs (press Ctrl-C again to leave at once)\n');
      abort();
    };
    process.on('SIGINT', h);
    process.on('SIGTERM', h);
    return () => {
      process.off('SIGINT', h);
      process.off('SIGTERM', h);
    };
  },
  ...(process.stdin.isTTY && process.stderr.isTTY ? { confirm: askOnTerminal } : {}),
});

