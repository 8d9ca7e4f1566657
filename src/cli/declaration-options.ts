// The options and help of `plan FILE`, `apply FILE` and `destroy FILE`: one table, each mode refusing
// the others' own options.
import { selectorList } from '../engine/builder-selection';
import { type OptionTable, UsageError } from './command';
import { parseDuration } from './duration';
import {
  CONNECTION_HELP, CONNECTION_OPTIONS, DATA_DIR_OPTION, HELP_OPTION, parseCommandArgs, type Parsed, QUIET_OPTION, SOURCES_OPTION, VARS_HELP, VARS_OPTIONS,
} from './options';

export type DeclarationMode = 'plan' | 'apply' | 'destroy';

const SUMMARY = {
  plan: 'Says what apply would create, change, regenerate or publish for the declaration FILE; changes nothing.',
  apply: 'Brings the service to the declaration FILE: uploads the software, builds the appliance, generates and publishes its images.',
  destroy: `Removes what the declaration FILE made on the service: the appliance of its name and version (if an apply
wrote it) with its images and their publications, and its software bundles no other appliance uses. Shows the
removals first and asks on a terminal; elsewhere it needs --auto-approve.`,
} as const;

/** The options of plan, apply and destroy (one object: each refuses the others' own options, MODE_ONLY). */
export const DECLARATION_OPTIONS = {
  ...CONNECTION_OPTIONS, ...DATA_DIR_OPTION, ...HELP_OPTION, ...QUIET_OPTION, ...SOURCES_OPTION, ...VARS_OPTIONS,
  json: { type: 'boolean' }, 'no-publish': { type: 'boolean' }, prune: { type: 'boolean' }, 'log-file': { type: 'string' },
  output: { type: 'string', short: 'o' }, 'detailed-exitcode': { type: 'boolean' },
  only: { type: 'string', multiple: true }, except: { type: 'string', multiple: true }, timeout: { type: 'string' },
  'auto-approve': { type: 'boolean' }, 'dry-run': { type: 'boolean' },
} as const;

/** Options only some modes take, and which: any other mode refuses them as a usage error. */
const MODE_ONLY: Readonly<Record<string, readonly DeclarationMode[]>> = {
  output: ['apply'], 'detailed-exitcode': ['plan'], 'no-publish': ['plan', 'apply'], prune: ['plan', 'apply'],
  only: ['plan', 'apply'], except: ['plan', 'apply'], 'auto-approve': ['destroy'], 'dry-run': ['destroy'],
};

/** The options `mode` takes, for its command module (the completion scripts). */
export function declarationOptions(mode: DeclarationMode): OptionTable {
  return Object.fromEntries(Object.entries(DECLARATION_OPTIONS).filter(([name]) => MODE_ONLY[name]?.includes(mode) ?? true));
}

const MODE_HELP: Readonly<Record<DeclarationMode, string>> = {
  plan: `      --no-publish       plan without the publications (nor the variables they read)
      --prune            also plan the removal of superseded images and their publications
      --detailed-exitcode  exit 0 no changes, 2 changes present, 1 error
`,
  apply: `      --no-publish       apply without the publications (nor the variables they read)
      --prune            after a successful apply, remove superseded images (older revisions, failed ones) and their publications
  -o, --output DIR       download every image into DIR (sha256 checked)
`,
  destroy: `      --auto-approve     remove without asking (needed without a terminal, and with --json)
      --dry-run          show what would be removed; remove nothing
`,
};

export function declarationHelp(mode: DeclarationMode): string {
  return `usage: appliance-forge ${mode} FILE [options]

${SUMMARY[mode]}

${CONNECTION_HELP}
      --data-dir DIR     data of the embedded server (default ./.appliance-forge; --data is a deprecated alias)
      --allow-outside-sources  upload bundle sources outside the declaration's folder (absolute, ../, links out)

${VARS_HELP}

${mode === 'destroy' ? 'time:' : `builders and time:
      --only NAME,…      run only these builders: types as written in the file (case-insensitive) or indexes
                         (0-based); repeatable
      --except NAME,…    run every builder but these`}
      --timeout DURATION bound the whole run, e.g. 90s, 30m, 1h30m: at the end the running jobs are cancelled
                         and the run fails (exit 1); default none (each job wait gives up after 1h)

output:
      --json             one JSON document on stdout${mode === 'apply' ? '' : ' (changes: one object per change)'}; progress on
                         stderr as JSON Lines (one object per line: type, time, resource, message…)
  -q, --quiet            no progress and no notes on stderr (warnings and errors stay)
      --log-file PATH    append the whole run to PATH as JSON Lines (events, request trace, result; no secret)
${MODE_HELP[mode]}
exit status: ${mode === 'plan' ? '0 ok (with --detailed-exitcode: 0 no changes, 2 changes, 1 error), ' : mode === 'destroy' ? '0 ok (or nothing to remove), ' : '0 ok, '}2 invalid file or usage, 1 ${mode === 'destroy' ? 'declined or any other failure' : 'other failure'}, 130 interrupted
environment: NO_COLOR, TERM=dumb (no colours, no redrawn bars); APPLIANCE_FORGE_LOG=debug (a line per request on stderr)
Terraform's and Packer's single dash works too: -var, -var-file, ${mode === 'destroy' ? '-auto-approve' : '-only, -except'}, -json.
`;
}

export interface DeclarationArgs {
  readonly values: Parsed<typeof DECLARATION_OPTIONS>['values'];
  readonly file: string;
  /** `--only` or `--except`, as builder-selection.ts takes them. */
  readonly selection: { readonly selectors: string[]; readonly label: string; readonly except?: boolean };
  readonly timeoutMs: number | undefined;
}

/**
 * The arguments of `mode`, checked before anything is read: one file, the options of this mode, one of
 * --only and --except, a duration. `help` when asked for the usage. Throws UsageError.
 */
export function parseDeclarationArgs(mode: DeclarationMode, args: readonly string[], warn: (m: string) => void): DeclarationArgs | 'help' {
  const usage = declarationHelp(mode);
  const { values, positionals } = parseCommandArgs(args, DECLARATION_OPTIONS, { usage, positionals: true, warn });
  if (values.help) return 'help';
  const [file, ...extra] = positionals;
  if (file === undefined || extra.length) throw new UsageError(`${mode} takes one declaration file\n${usage}`);
  for (const [option, modes] of Object.entries(MODE_ONLY)) {
    if ((values as Record<string, unknown>)[option] !== undefined && !modes.includes(mode)) {
      throw new UsageError(`--${option} goes with ${modes.join(' and ')}\n${usage}`);
    }
  }
  if (values.only && values.except) throw new UsageError('--only and --except exclude each other: give one');
  const selection = values.except
    ? { selectors: values.except.flatMap(selectorList), label: '--except', except: true }
    : { selectors: (values.only ?? []).flatMap(selectorList), label: '--only' };
  const timeoutMs = values.timeout === undefined ? undefined : parseDuration(values.timeout, '--timeout');
  return { values, file, selection, timeoutMs };
}
