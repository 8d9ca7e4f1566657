// A build's child processes die with the server. Without this, a SIGKILLed server leaves `cp`, `mke2fs` or
// `mmdebstrap` writing into its work area, and the next start finds a directory that keeps filling up.
// `setpriv --pdeathsig KILL` (util-linux, Priority required on Debian) execs the program with the parent-death
// signal set, so the pid, the process group and the exit status stay those of the program itself.
import { findOnPath, sbinPath } from './path';

let setpriv: string | null | undefined;

/** The command line that runs `command args` so that it is killed when this process dies (unchanged where setpriv is missing). */
export function diesWithParent(command: string, args: readonly string[]): [string, string[]] {
  if (setpriv === undefined) setpriv = findOnPath('setpriv', sbinPath()) ?? null;
  return setpriv === null ? [command, [...args]] : [setpriv, ['--pdeathsig', 'KILL', '--', command, ...args]];
}
