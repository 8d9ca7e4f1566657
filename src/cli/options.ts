// The options every command shares, named once: the connection options with the platform tool's
// short flags (hammr: -a URL, -u USER, -p PASSWORD, -k PUBLIC KEY, -s SECRET KEY), the data dir,
// --help, --quiet, --json. Old spellings stay accepted for a while, with a warning that names the new one;
// so does the single dash of Terraform and Packer (`-var`, `-only`).
import { parseArgs } from 'node:util';
import { UsageError, type OptionTable as Options } from './command';
import { messageOf } from '../errors';
import type { Vars } from '../engine/env-refs';
import { collectVars, VarsError } from '../engine/vars';
import { nearMiss } from '../engine/platform-keys';

export type Parsed<O extends Options> = ReturnType<typeof parseArgs<{ options: O; allowPositionals: true; strict: true }>>;

export const CONNECTION_OPTIONS = {
  url: { type: 'string', short: 'a' },
  user: { type: 'string', short: 'u' },
  'api-key': { type: 'string', short: 'k' },
  'secret-key': { type: 'string', short: 's' },
  password: { type: 'string', short: 'p' },
  credentials: { type: 'string', short: 'c' },
} as const satisfies Options;

export const CONNECTION_HELP = `connection (flags win over the APPLIANCE_FORGE_* variables; none at all, or --url embedded: the
embedded server; a user, credential or credentials file without a URL is a usage error):
  -a, --url URL          the service's base URL, or embedded    APPLIANCE_FORGE_URL
  -u, --user LOGIN       the user                               APPLIANCE_FORGE_USER
  -k, --api-key KEY      public key of an API key pair          APPLIANCE_FORGE_API_KEY
  -s, --secret-key KEY   its secret key                         APPLIANCE_FORGE_SECRET_KEY
  -p, --password PW      a password instead of a key pair       APPLIANCE_FORGE_PASSWORD
  -c, --credentials FILE the platform tool's credentials.yml|json (url, user, password or publickey/secretkey);
                         flags win over it, it wins over the variables`;

export const DATA_DIR_OPTION = { 'data-dir': { type: 'string' } } as const satisfies Options;
export const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const satisfies Options;
export const QUIET_OPTION = { quiet: { type: 'boolean', short: 'q' } } as const satisfies Options;
/** validate, plan and apply: bundle sources outside the declaration's folder (engine/bundle-source.ts). */
export const SOURCES_OPTION = { 'allow-outside-sources': { type: 'boolean' } } as const satisfies Options;

/** validate, plan and apply: the values of `${var:NAME}` (engine/vars.ts). */
export const VARS_OPTIONS = { var: { type: 'string', multiple: true }, 'var-file': { type: 'string', multiple: true } } as const satisfies Options;

export const VARS_HELP = `variables (\${var:NAME} in the file):
      --var NAME=VALUE   a variable; repeatable (-var works too, as in Terraform and Packer)
      --var-file FILE    a YAML or JSON map of NAME: value; repeatable. Files are read in order, then each
                         --var: a later value wins, so --var wins over every file`;

/** The values of `${var:NAME}`: a --var or --var-file that cannot be used is a usage error (exit 2). */
export function varsOf(values: { var?: string[] | undefined; 'var-file'?: string[] | undefined }): Vars {
  try {
    return collectVars({ files: values['var-file'], assignments: values.var });
  } catch (e) {
    if (e instanceof VarsError) throw new UsageError(e.message);
    throw e;
  }
}

/** Old spelling → the one name it now has. */
const DEPRECATED: Readonly<Record<string, string>> = { '--data': '--data-dir' };

/**
 * Rewrites deprecated spellings (`--data DIR`, `--data=DIR`) to their names, and tells `warn` once
 * per spelling. Stops at `--`: what follows is not an option.
 */
export function renameDeprecated(args: readonly string[], known: Options, warn: (message: string) => void): string[] {
  const out: string[] = [];
  const told = new Set<string>();
  let rest = false;
  for (const a of args) {
    if (rest || a === '--') {
      rest = true;
      out.push(a);
      continue;
    }
    const [flag, ...value] = a.split('=');
    const to = DEPRECATED[flag!];
    if (to && Object.prototype.hasOwnProperty.call(known, to.slice(2)) && !Object.prototype.hasOwnProperty.call(known, flag!.slice(2))) {
      if (!told.has(flag!)) warn(`${flag} is deprecated: use ${to}`);
      told.add(flag!);
      out.push(value.length ? `${to}=${value.join('=')}` : to);
    } else {
      out.push(a);
    }
  }
  return out;
}

/**
 * Terraform's and Packer's single dash before a long option (`-var NAME=V`, `-var-file=F`, `-only=QCOW2`)
 * becomes `--` when the name is one of the command's long options: parseArgs would read `-only` as the
 * short options -o -n -l -y. A string option's value and whatever follows `--` are left as they are.
 */
export function acceptSingleDash(args: readonly string[], known: Options): string[] {
  const out: string[] = [];
  let rest = false;
  let isValue = false;
  for (const a of args) {
    if (rest || isValue) {
      out.push(a);
      isValue = false;
      continue;
    }
    rest = a === '--';
    const name = /^-([a-z][a-z0-9-]+)(?:=|$)/.exec(a)?.[1];
    const arg = name !== undefined && Object.prototype.hasOwnProperty.call(known, name) ? `-${a}` : a;
    out.push(arg);
    // `--url URL`, `-o DIR`: the next argument is a value, whatever it looks like.
    const long = /^--([^=]+)$/.exec(arg)?.[1];
    const short = /^-([A-Za-z])$/.exec(arg)?.[1];
    const option = long !== undefined ? (Object.prototype.hasOwnProperty.call(known, long) ? known[long] : undefined) : Object.values(known).find((o) => short !== undefined && o.short === short);
    isValue = option?.type === 'string';
  }
  return out;
}

/**
 * parseArgs's error in this command line's words: an unknown option is named once, with the option a typo most
 * likely meant (`--jsn` → --json), instead of Node's advice about positionals (with its unbalanced quotes).
 */
function parseArgsText(e: unknown, options: Options): string {
  const unknown = (e as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /^Unknown option '([^']+)'/.exec(messageOf(e))?.[1] : undefined;
  if (unknown === undefined) return messageOf(e);
  const long = unknown.startsWith('--');
  const near = long ? nearMiss(unknown.slice(2).split('=')[0]!, Object.keys(options)) : undefined;
  return `unknown option ${unknown}${near ? `; did you mean --${near}?` : ''}`;
}

/** parseArgs with the deprecated and single-dash spellings accepted; a parse error is a usage error that shows the usage. */
export function parseCommandArgs<O extends Options>(
  args: readonly string[],
  options: O,
  o: { usage: string; warn: (message: string) => void; positionals?: boolean },
): Parsed<O> {
  try {
    // Positionals are refused here rather than by parseArgs, so that one type serves both kinds of command.
    const r = parseArgs({ args: renameDeprecated(acceptSingleDash(args, options), options, o.warn), options, allowPositionals: true, strict: true });
    if (!o.positionals && r.positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(r.positionals[0])}\n${o.usage}`);
    return r;
  } catch (e) {
    if ((e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) throw new UsageError(`${parseArgsText(e, options)}\n${o.usage.split("\n")[0]} (--help for the options)`);
    throw e;
  }
}

/** True when `--help`/`-help`/`-h` is among the arguments (before `--`): help wins over any other problem. */
export function asksForHelp(args: readonly string[]): boolean {
  for (const a of args) {
    if (a === '--') return false;
    if (a === '--help' || a === '-help' || a === '-h') return true;
  }
  return false;
}
