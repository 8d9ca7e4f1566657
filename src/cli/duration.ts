// `--timeout DURATION`: `90s`, `30m`, `1h30m` (Go's units, as Packer and Terraform write them), or a
// whole number of seconds.
import { UsageError } from './command';

const UNIT_MS = { h: 3_600_000, m: 60_000, s: 1000 } as const;
/** Node's timers wait at most 2^31 - 1 ms (about 24.8 days). */
const MAX_MS = 2 ** 31 - 1;

/** Milliseconds of a duration; a usage error naming `flag` when it is not one. */
export function parseDuration(text: string, flag: string): number {
  const parts = /^\d+$/.test(text) ? [[text, 's']] : /^(?:\d+h)?(?:\d+m)?(?:\d+s)?$/.test(text) ? [...text.matchAll(/(\d+)([hms])/g)].map((m) => [m[1]!, m[2]!]) : [];
  const ms = parts.reduce((sum, [n, unit]) => sum + Number(n) * UNIT_MS[unit as keyof typeof UNIT_MS], 0);
  if (!parts.length || ms < 1000 || ms > MAX_MS) {
    throw new UsageError(`${flag} must be a duration from 1s to 596h, e.g. 90s, 30m or 1h30m (a bare number is seconds), not ${JSON.stringify(text.slice(0, 40))}`);
  }
  return ms;
}
