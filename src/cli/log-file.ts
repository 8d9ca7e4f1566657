// `--log-file PATH`: the whole run as JSON Lines (progress.ts records: every event, the request trace,
// notes, warnings, the result and the failure with its stack), whatever the console shows. Appended,
// created 0600; every text masked as the console's is.
import { closeSync, openSync, writeSync } from 'node:fs';
import { systemErrorText } from '../error-text';
import { messageOf } from '../errors';
import { UsageError } from './command';
import { jsonLines, type JsonLines } from './progress';

export type LogFile = JsonLines & { close(): void };

/** Opens (or creates) the log; a path that cannot be written is a usage error. A later write error stops the log, with one warning. */
export function openLogFile(path: string, mask: (text: string) => string, warn: (message: string) => void): LogFile {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'a', 0o600);
  } catch (e) {
    throw new UsageError(`--log-file ${systemErrorText(e) ?? `${path}: ${messageOf(e)}`}`);
  }
  const lines = jsonLines({
    write: (text: string) => {
      if (fd === undefined) return;
      try {
        writeSync(fd, text);
      } catch (e) {
        // A full disk must not fail the apply it logs.
        warn(`--log-file ${path}: ${systemErrorText(e) ?? messageOf(e)}; the log stops here`);
        closeSync(fd);
        fd = undefined;
      }
    },
  }, mask);
  return {
    ...lines,
    close: () => {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}
