// `serve`'s numeric flags in one table: the port and the limits an operator sets. The parser (one check
// for all), `serve --help` and the table in docs/server.md (scripts/gen-serve-flags.mjs) are made from it;
// the defaults are the constants the server and the image builder use themselves.
//
// Every flag has its environment variable, APPLIANCE_FORGE_ and the flag's name in capitals with `_` for
// `-` (--max-jobs: APPLIANCE_FORGE_MAX_JOBS), as --database-url has APPLIANCE_FORGE_DATABASE_URL: a flag
// wins over its variable, and an empty variable counts as unset.
import { DEFAULT_LIMITS, DEFAULT_MAX_BUILDS, MAX_DISK_MIB, MAX_TIMER_MS, MIN_DISK_MIB, type Limits } from '../model/limits';
import { DEFAULT_LAYER_CACHE_BYTES } from '../imaging';
import { UsageError } from './command';

/** `serve --port` when neither the flag nor its variable is given (the server itself takes any free port). */
export const DEFAULT_SERVE_PORT = 8080;

/** What a flag's number counts: its values are whole numbers of it. */
export type ServeFlagUnit = 'bytes' | 'MiB' | 'seconds' | 'minutes' | 'count' | 'port';

export interface ServeFlag {
  /** The setting it makes: a field of `limits` (Limits) or of startServer's options. */
  readonly name: keyof Limits | 'port' | 'maxBuilds' | 'maxCacheBytes';
  /** The flag, without its `--`. */
  readonly flag: string;
  /** Its environment variable (APPLIANCE_FORGE_<FLAG>). */
  readonly env: string;
  /** The server's default, in the server's unit (the setting's). */
  readonly default: number;
  /** Said instead of the default when the default is no bound at all. */
  readonly defaultText?: string;
  /** The smallest and largest value accepted, in the flag's unit. */
  readonly min: number;
  readonly max: number;
  readonly unit: ServeFlagUnit;
  /** The setting is the flag's value times this (MiB → bytes: 1024²; minutes → ms: 60 000). */
  readonly scale: number;
  /** What it limits, for --help and the docs. */
  readonly help: string;
}

const MIB = 1024 ** 2;

const flag = (f: Omit<ServeFlag, 'env'>): ServeFlag => ({ ...f, env: `APPLIANCE_FORGE_${f.flag.toUpperCase().replace(/-/g, '_')}` });

export const SERVE_FLAGS: readonly ServeFlag[] = [
  flag({ name: 'port', flag: 'port', default: DEFAULT_SERVE_PORT, min: 0, max: 65535, unit: 'port', scale: 1, help: 'the port to listen on, 0 for any free one' }),
  flag({ name: 'uploadBytes', flag: 'max-upload-bytes', default: DEFAULT_LIMITS.uploadBytes, min: 0, max: 999_999_999_999_999, unit: 'bytes', scale: 1, help: 'largest uploaded software file (413 above it)' }),
  flag({ name: 'maxDiskMiB', flag: 'max-disk-mib', default: DEFAULT_LIMITS.maxDiskMiB, min: MIN_DISK_MIB, max: MAX_DISK_MIB, unit: 'MiB', scale: 1, help: 'largest disk an image may ask for (400 above it)' }),
  flag({
    name: 'signedUrlMaxAgeSeconds', flag: 'signed-url-max-age', default: DEFAULT_LIMITS.signedUrlMaxAgeSeconds, defaultText: 'none (an expiry is optional)', min: 1, max: 999_999_999, unit: 'seconds', scale: 1,
    help: 'every signed URL must carry an expiry at most this far ahead',
  }),
  flag({ name: 'jobsPerUser', flag: 'max-jobs-per-user', default: DEFAULT_LIMITS.jobsPerUser, min: 1, max: 999_999, unit: 'count', scale: 1, help: 'open generations and publications per user (429 beyond)' }),
  flag({ name: 'jobsTotal', flag: 'max-jobs', default: DEFAULT_LIMITS.jobsTotal, min: 1, max: 999_999, unit: 'count', scale: 1, help: 'open generations and publications on the whole server (503 beyond)' }),
  flag({ name: 'imagesPerUser', flag: 'max-images-per-user', default: DEFAULT_LIMITS.imagesPerUser, min: 1, max: 999_999, unit: 'count', scale: 1, help: 'images one user may keep, whatever their status (403 beyond)' }),
  flag({ name: 'storageBytesPerUser', flag: 'max-storage-mib-per-user', default: DEFAULT_LIMITS.storageBytesPerUser, min: 1, max: 999_999_999, unit: 'MiB', scale: MIB, help: 'uploaded software files one user may keep in all (507 beyond)' }),
  flag({ name: 'buildTimeoutMs', flag: 'max-build-minutes', default: DEFAULT_LIMITS.buildTimeoutMs, min: 1, max: Math.floor(MAX_TIMER_MS / 60_000), unit: 'minutes', scale: 60_000, help: 'a longer build is stopped and fails' }),
  flag({ name: 'maxBuilds', flag: 'max-builds', default: DEFAULT_MAX_BUILDS, min: 1, max: 999, unit: 'count', scale: 1, help: 'image builds this node runs at once (the others wait)' }),
  flag({ name: 'maxCacheBytes', flag: 'max-cache-mib', default: DEFAULT_LAYER_CACHE_BYTES, min: 1024, max: 999_999_999, unit: 'MiB', scale: MIB, help: 'size bound of the OS layer cache: layers, downloaded packages, builds in progress' }),
];

/** The settings the flags and variables give: the limits given (the server's defaults stand for the others), the port and builds always. */
export interface ServeSettings {
  port: number;
  maxBuilds: number;
  maxCacheBytes: number | undefined;
  limits: Partial<Limits>;
}

const UNIT_WORDS: Readonly<Record<ServeFlagUnit, string>> = { bytes: ' bytes', MiB: ' MiB', seconds: ' seconds', minutes: ' minutes', count: '', port: '' };

/** A flag's value (given as `source`: `--flag` or its variable) as its setting, or a usage error in the one wording of all. */
export function serveFlagValue(f: ServeFlag, text: string, source = `--${f.flag}`): number {
  const n = Number(text);
  if (!/^\d{1,16}$/.test(text) || n < f.min || n > f.max) {
    throw new UsageError(`${source} must be a whole number from ${f.min} to ${f.max}${UNIT_WORDS[f.unit]}, got ${JSON.stringify(text)}`);
  }
  return n * f.scale;
}

/** serve's numeric settings from its parsed flags (`values`, by flag name), then from `env` for those not given. */
export function parseServeFlags(values: Readonly<Record<string, unknown>>, env: NodeJS.ProcessEnv = process.env): ServeSettings {
  const out: ServeSettings = { port: DEFAULT_SERVE_PORT, maxBuilds: DEFAULT_MAX_BUILDS, maxCacheBytes: undefined, limits: {} };
  for (const f of SERVE_FLAGS) {
    const given = values[f.flag];
    const fromEnv = env[f.env] || undefined;
    if (typeof given !== 'string' && fromEnv === undefined) continue;
    const v = typeof given === 'string' ? serveFlagValue(f, given) : serveFlagValue(f, fromEnv!, f.env);
    if (f.name === 'port' || f.name === 'maxBuilds' || f.name === 'maxCacheBytes') out[f.name] = v;
    else out.limits[f.name] = v;
  }
  return out;
}

/** The parseArgs options of the table's flags (all strings: the check above reads them). */
export const SERVE_FLAG_OPTIONS: Readonly<Record<string, { type: 'string' }>> = Object.fromEntries(SERVE_FLAGS.map((f) => [f.flag, { type: 'string' as const }]));

/** The default in the flag's unit, as --help and the docs say it. */
export function serveFlagDefault(f: ServeFlag): string {
  return f.defaultText ?? String(f.default / f.scale);
}

const UNIT_NAMES: Readonly<Record<ServeFlagUnit, string>> = { bytes: 'bytes', MiB: 'MiB', seconds: 'seconds', minutes: 'minutes', count: 'a count', port: 'a TCP port' };

/** The flags' lines of `serve --help`: the flag and what it limits, then its default, range and variable. */
export function serveFlagsHelp(): string {
  const column = 32;
  return SERVE_FLAGS.map((f) => {
    const head = `      --${f.flag} N`;
    const first = head.length < column ? `${head.padEnd(column)}${f.help}` : `${head}\n${' '.repeat(column)}${f.help}`;
    const unit = f.unit === 'count' || f.unit === 'port' ? '' : ` ${f.unit}`;
    return `${first}\n${' '.repeat(column)}default ${serveFlagDefault(f)}; ${f.min} to ${f.max}${unit}; ${f.env}`;
  }).join('\n');
}

/** The markdown table of the flags in docs/server.md, between its generated-block markers. */
export function serveFlagsMarkdown(): string {
  const rows = SERVE_FLAGS.map((f) => `| \`--${f.flag}\` | \`${f.env}\` | ${serveFlagDefault(f)} | ${f.min} to ${f.max} | ${UNIT_NAMES[f.unit]} | ${f.help} |`);
  const lead = [
    "Each of these flags has its environment variable (`APPLIANCE_FORGE_` and the flag's name in capitals, `_` for `-`): the flag",
    'wins over its variable, and an empty variable counts as unset. A value outside its range is a usage error (exit 2).',
  ];
  return [...lead, '', '| flag | environment variable | default | range | unit | what it limits |', '| --- | --- | --- | --- | --- | --- |', ...rows].join('\n') + '\n';
}
