// The run of a command that works on image files (boot, diff): SIGINT or SIGTERM aborts its work, which then
// ends with exit 130 and one line; a refused image is the caller's to fix, like a bad flag (a usage error).
import { AbortedError, isForgeError } from '../errors';
import { UsageError } from './command';

export async function interruptible(
  command: string,
  /** What stopping did, after "interrupted" (e.g. ", QEMU stopped"). */
  stopped: string,
  /** The message of an error that is the caller's input, else undefined. */
  inputError: (e: unknown) => string | undefined,
  work: (signal: AbortSignal) => Promise<number>,
): Promise<number> {
  const ac = new AbortController();
  const onSignal = (): void => ac.abort();
  // \`on\`, not \`once\`, until the work ends: a module that watches signals to clean up at exit
  // (proper-lockfile's signal-exit) kills the process again when it finds itself the last listener.
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await work(ac.signal);
  } catch (e) {
    const input = inputError(e);
    if (input !== undefined) throw new UsageError(input);
    if (ac.signal.aborted || isForgeError(e, AbortedError)) {
      process.stderr.write(`appliance-forge ${command}: interrupted${stopped}\n`);
      return 130;
    }
    throw e;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
