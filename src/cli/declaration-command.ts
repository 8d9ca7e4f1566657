// `plan FILE`, `apply FILE` and `destroy FILE`: a thin layer over the engine (style example 11). Settings
// come from flags, then APPLIANCE_FORGE_* variables; without a URL the embedded server serves the run.
// Exit 0 only on success, 2 for an invalid file (or usage), 1 otherwise; 130 when interrupted.
import { createInterface } from 'node:readline';
import {
  applyDeclaration, closingLine, type Declaration, destroyPlanned, type EngineEvent, type EngineOptions, formatPlan, formatProblem, formatProblems,
  formatRemovals, listProblems, loadDeclaration, planChanges, planDeclaration, planDestroy, planSummary, removalChanges, saveImages,
  selectBuilders, selectorList, type ApplyResult, type Plan, type Problem, type SavedImage, SecretSet,
} from '../engine';
import { proxyFromEnv, type TraceEntry } from '../client';
import {
  chooseTarget, connect, ConnectSettingsError, type ConnectSettings, type Connection, EMBEDDED, publicTarget,
} from '../engine/connect';
import { CONNECTION_ENV, CONNECTION_SETTINGS, CREDENTIALS, type ConnectionSetting, type EnvSettings, settingsFromEnv } from '../engine/settings-env';
import { describeFailure, type Deadline } from '../engine/failure';
import { type OptionTable, UsageError } from './command';
import { readCredentialsFile } from './credentials-file';
import { parseDuration } from './duration';
import { openLogFile } from './log-file';
import {
  CONNECTION_HELP, CONNECTION_OPTIONS, DATA_DIR_OPTION, HELP_OPTION, parseCommandArgs, QUIET_OPTION, SOURCES_OPTION, VARS_HELP, VARS_OPTIONS, varsOf,
} from './options';
import { createRenderer, jsonLines, renderMode, useColor, type Out } from './progress';
import { packageVersion } from './version';

export type DeclarationMode = 'plan' | 'apply' | 'destroy';

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

const processIo = (): CliIo => ({
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
exit status: ${mode === 'plan' ? '0 ok (with --detailed-exitcode: 0 no changes, 2 changes, 1 error), ' : mode === 'destroy' ? '0 ok (or nothing to remove), 1 declined or failed, ' : '0 ok, '}2 invalid file or usage, 1 other failure, 130 interrupted
environment: NO_COLOR, TERM=dumb (no colours, no redrawn bars); APPLIANCE_FORGE_LOG=debug (a line per request on stderr)
Terraform's and Packer's single dash works too: -var, -var-file, -only, -except, -json.
`;
}

/** The connection flags as parsed (CONNECTION_OPTIONS and DATA_DIR_OPTION). */
export type ConnectionValues = { readonly [K in keyof typeof CONNECTION_OPTIONS | 'data-dir']?: string | undefined };

/**
 * The service a command talks to: the settings of its flags, credentials file and environment, and the
 * target chosen from them (a credential without a URL is a usage error). Credentials join `secrets`;
 * with `trace`, each HTTP exchange is told to it (without the signature: client/trace.ts).
 */
export function serviceSettings(
  values: ConnectionValues, env: CliIo['env'], secrets: SecretSet, o: { warn: (m: string) => void; trace?: ((line: string) => void) | undefined },
): { settings: ConnectSettings; target: string; urlGiven: boolean } {
  const { settings: given, origins } = connectionSettings(values, env, o.warn);
  let url: string;
  try {
    url = chooseTarget(given.url, origins, { url: `--url URL (or ${CONNECTION_ENV.url})`, embedded: `--url ${EMBEDDED}` });
  } catch (e) {
    if (e instanceof ConnectSettingsError) throw new UsageError(e.message);
    throw e;
  }
  const trace = o.trace;
  const settings = {
    ...given,
    url,
    dataDir: values['data-dir'],
    ...(trace ? { onTrace: (t: TraceEntry) => trace(`${t.method} ${t.path} ${t.status ?? t.error} ${t.ms}ms`) } : {}),
  };
  secrets.add(settings.secretKey);
  secrets.add(settings.password);
  return { settings, target: publicTarget(url), urlGiven: !!given.url };
}

/**
 * Connects; tells `debug` the proxy a traced run goes through, and returns the line that says what serves
 * the run (`service URL`, or the embedded server and its data folder).
 */
export async function openConnection(
  settings: ConnectSettings, env: CliIo['env'], secrets: SecretSet, o: { debug: (line: string) => void; urlGiven: boolean; target: string },
): Promise<{ conn: Connection; using: string }> {
  const conn = await connect(settings);
  secrets.addAll(conn.secrets.list());
  // The proxy in use (credentials shown as ***); the embedded server is never reached through one.
  if (settings.onTrace && conn.target === 'remote') {
    const noProxy = env.no_proxy ?? env.NO_PROXY;
    for (const p of proxyFromEnv(env)) o.debug(`proxy ${p}${noProxy ? ` (NO_PROXY=${noProxy})` : ''}`);
  }
  const using = conn.target === 'embedded'
    ? `${o.urlGiven ? `url ${EMBEDDED}` : 'no service URL'}: using the embedded server (${conn.url}, data in ${settings.dataDir ?? './.appliance-forge'})`
    : `service ${o.target}`;
  return { conn, using };
}

export async function runDeclarationCommand(mode: DeclarationMode, args: readonly string[], io: CliIo = processIo()): Promise<number> {
  const usage = declarationHelp(mode);
  const { values, positionals } = parseCommandArgs(args, DECLARATION_OPTIONS,
    { usage, positionals: true, warn: (m) => io.stderr.write(`appliance-forge ${mode}: warning: ${m}
`) });
  if (values.help) {
    io.stdout.write(usage);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError(`${mode} takes one declaration file\n${usage}`);
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
  const vars = varsOf(values);
  const file = positionals[0]!;
  const env = io.env;
  const json = values.json === true;
  const quiet = values.quiet === true;
  const publish = values['no-publish'] !== true;
  // terraform plan -detailed-exitcode: 0 no changes, 2 changes present, 1 any error.
  const detailed = values['detailed-exitcode'] === true;
  // As terraform destroy: removing needs a yes from a person at a terminal, or --auto-approve; a JSON
  // reader is a program, so --json needs --auto-approve too. Refused before anything is read.
  const approved = values['auto-approve'] === true;
  if (mode === 'destroy' && !approved && values['dry-run'] !== true && (json || !io.confirm)) {
    throw new UsageError(`${json ? 'with --json' : 'without a terminal'} there is no one to confirm the removals: add --auto-approve to remove without asking, or --dry-run to see what would go`);
  }
  const secrets = new SecretSet();
  const warn = (m: string) => io.stderr.write(`appliance-forge ${mode}: warning: ${m}\n`);
  // APPLIANCE_FORGE_LOG=debug (and the log file): one line per HTTP exchange.
  const traced = env.APPLIANCE_FORGE_LOG === 'debug' || values['log-file'] !== undefined;
  const { settings, target, urlGiven } = serviceSettings(values, env, secrets, { warn, trace: traced ? (l) => debug(l) : undefined });
  const mask = (s: string) => secrets.mask(s);
  // With --json, stderr is JSON Lines too: the events (unless --quiet) and the debug trace.
  const stderrJson = json ? jsonLines(io.stderr, mask) : undefined;
  const err = (s: string) => io.stderr.write(`${mask(s)}\n`);
  const log = values['log-file'] === undefined ? undefined : openLogFile(values['log-file'], mask, warn);
  log?.log('info', `appliance-forge ${packageVersion()} ${mode} ${args.join(' ')} (node ${process.version}, ${process.platform})`);
  const out = (s: string) => {
    io.stdout.write(`${mask(s)}\n`);
    if (s) log?.log('info', s);
  };
  function debug(s: string): void {
    if (env.APPLIANCE_FORGE_LOG === 'debug') {
      if (stderrJson) stderrJson.log('debug', s);
      else err(`debug: ${s}`);
    }
    log?.log('debug', s);
  }
  const renderer = stderrJson && !quiet ? stderrJson : createRenderer(renderMode(io.stderr, env, { silent: json || quiet }), io.stderr, { color: useColor(env) });
  const onEvent = (event: EngineEvent) => {
    renderer.event(event);
    log?.event(event);
  };
  const ac = new AbortController();
  const release = io.onInterrupt?.(() => ac.abort()) ?? (() => {});
  // --timeout bounds the whole run through the same signal as SIGINT: the running jobs are cancelled.
  const deadline: Deadline | undefined = timeoutMs === undefined
    ? undefined
    : { signal: AbortSignal.any([ac.signal, AbortSignal.timeout(timeoutMs)]), bound: `${values.timeout} (--timeout)` };
  const signal = deadline?.signal ?? ac.signal;
  let conn: Connection | undefined;
  let warnings: readonly Problem[] = [];
  try {
    // destroy publishes nothing: the publication fields and accounts stay unread, as with --no-publish.
    const loaded = loadDeclaration(file, { env, vars, allowOutsideSources: values['allow-outside-sources'] === true, publish: publish && mode !== 'destroy' });
    secrets.addAll(loaded.declaration.secrets);
    warnings = loaded.problems;
    // Builders keep their index in the declaration: the engine and the result name them by it.
    const declaration = { ...loaded.declaration, builders: selectBuilders(loaded.declaration.builders, selection.selectors, selection) };
    if (!json) for (const l of formatProblems(warnings)) err(l);
    for (const w of warnings) log?.log('warning', formatProblem(w));
    const opened = await openConnection(settings, env, secrets, { debug, urlGiven, target });
    conn = opened.conn;
    if (conn.target === 'embedded' && !json && !quiet) err(opened.using);
    log?.log('info', opened.using);
    const o = {
      client: conn.client, secrets, signal, publish, prune: values.prune === true, onEvent,
      // A job wait gives up no sooner than the run's bound.
      ...(timeoutMs !== undefined ? { jobTimeoutMs: timeoutMs } : {}),
    };
    if (mode === 'destroy') {
      return await destroy(declaration, o, {
        conn, json, target, approved, dryRun: values['dry-run'] === true, warnings, out, err, finish: renderer.finish, confirm: io.confirm,
      });
    }
    if (mode === 'plan') {
      const { plan } = await planDeclaration(declaration, o);
      renderer.finish();
      if (json) out(JSON.stringify({ ok: true, mode, target, ...planJson(plan, secrets), warnings }));
      else for (const l of [...formatPlan(plan), '', closingLine('plan', plan)]) out(l);
      return detailed && plan.hasChanges ? 2 : 0;
    }
    const r = await applyDeclaration(declaration, o);
    const files = values.output === undefined ? undefined : await saveImages(conn.client, r.images, values.output, o);
    renderer.finish();
    if (json) out(JSON.stringify({ ok: true, mode, target, ...planJson(r.plan, secrets), result: r, ...(files ? { files } : {}), warnings }));
    else for (const l of [...formatResult(r), ...formatFiles(files), '', closingLine('apply', r.plan)]) out(l);
    return 0;
  } catch (e) {
    renderer.finish();
    const f = describeFailure(e, secrets, deadline);
    if (json) out(JSON.stringify({ ok: false, mode, target, error: { message: f.message, ...listProblems(f.problems) }, warnings }));
    // The problems in file order, warnings too (an unknown field next to an error is often its cause).
    else if (f.problems.length) err([f.message.split('\n')[0]!, ...formatProblems(f.problems)].join('\n'));
    else err(`${mode} failed: ${f.message}`);
    // The log keeps what the console bounds: every problem, and where a failure came from.
    log?.log('error', f.message);
    for (const p of f.problems) log?.log(p.severity, formatProblem(p));
    if (e instanceof Error && e.stack) log?.log('debug', e.stack);
    return f.interrupted ? 130 : detailed ? 1 : f.exitCode;
  } finally {
    release();
    await conn?.close();
    log?.close();
  }
}

/** Each connection setting's flag. */
const FLAGS = { url: 'url', user: 'user', apiKey: 'api-key', secretKey: 'secret-key', password: 'password' } as const satisfies Record<ConnectionSetting, keyof typeof CONNECTION_OPTIONS>;

/**
 * The connection settings and where those other than the URL came from (`--user`, `--credentials FILE`,
 * `APPLIANCE_FORGE_PASSWORD`): flags, then the credentials file given, then the environment; a file's
 * credentials come whole (its password is not mixed with a key pair from the environment).
 */
function connectionSettings(
  values: { readonly [K in keyof typeof CONNECTION_OPTIONS]?: string | undefined },
  env: CliIo['env'],
  warn: (m: string) => void,
): { settings: EnvSettings; origins: string[] } {
  const file = values.credentials;
  const c = file !== undefined ? readCredentialsFile(file, warn) : undefined;
  const e = settingsFromEnv(env);
  const settings: { [K in ConnectionSetting]?: string } = {};
  const origins = new Set<string>();
  for (const k of CONNECTION_SETTINGS) {
    const flag = values[FLAGS[k]];
    const fromEnv = !c || !CREDENTIALS.includes(k) ? e[k] : undefined;
    const [v, origin] = flag ? [flag, `--${FLAGS[k]}`] : c?.[k] ? [c[k], `--credentials ${file}`] : [fromEnv, CONNECTION_ENV[k]];
    if (!v) continue;
    settings[k] = v;
    if (k !== 'url') origins.add(origin);
  }
  // A credentials file without a URL asks for a service too, whatever it holds.
  if (file !== undefined && !settings.url) origins.add(`--credentials ${file}`);
  return { settings, origins: [...origins] };
}

/** `summary` counts; `changes` one object per planned item (engine/changes.ts), no-ops included. */
function planJson(plan: Plan, secrets: SecretSet) {
  return { summary: planSummary(plan), changes: planChanges(plan, secrets) };
}

function formatFiles(files: readonly SavedImage[] | undefined): string[] {
  return (files ?? []).map((f) => `  ${f.format.padEnd(18)} ${f.kept ? 'kept     ' : 'saved    '} ${f.path} (sha256 checked)`);
}

function formatResult(r: ApplyResult & { plan: Plan }): string[] {
  const mib = (n?: number) => (n === undefined ? '?' : `${(n / 1048576).toFixed(1)} MiB`);
  const lines = [`appliance ${r.plan.appliance.name} ${r.plan.appliance.version}: ${r.applianceUri} (revision ${r.revision})`];
  for (const i of r.images) {
    lines.push(`  ${i.format.padEnd(18)} ${i.reused ? 'reused   ' : 'generated'} ${mib(i.size).padStart(10)} sha256 ${i.sha256 ?? '?'} ${i.imageUri}`);
    if (i.publication) {
      lines.push(`  ${''.padEnd(18)} ${i.publication.reused ? 'reused   ' : 'published'} ${i.publication.displayName} → cloud id ${i.publication.cloudId ?? '?'}`);
    }
  }
  for (const x of r.removed) lines.push(`  ${x.kind.padEnd(18)} ${x.outcome === 'removed' ? 'removed  ' : 'gone     '} ${x.name} ${x.uri}`);
  return lines;
}

/**
 * `destroy FILE`: the removals first (stdout), then a yes from the terminal unless approved, then the
 * removals in order. Declined: exit 1, nothing removed.
 */
async function destroy(
  decl: Declaration, o: EngineOptions,
  c: {
    conn: Connection; json: boolean; target: string; approved: boolean; dryRun: boolean; warnings: readonly Problem[];
    out: (s: string) => void; err: (s: string) => void; finish: () => void; confirm?: CliIo['confirm'];
  },
): Promise<number> {
  const plan = await planDestroy(decl, o);
  const what = `${decl.stack.name} ${decl.stack.version}`;
  const doc = {
    ok: true, mode: 'destroy', target: c.target,
    summary: { changes: plan.hasChanges, remove: plan.removals.length, keep: plan.kept.length },
    changes: removalChanges(plan.removals, plan.kept, o.secrets),
  };
  if (!c.json) for (const l of formatRemovals(plan.removals, plan.kept)) c.out(l);
  if (c.dryRun || !plan.hasChanges) {
    c.finish();
    if (c.json) c.out(JSON.stringify({ ...doc, warnings: c.warnings }));
    // Terraform's closing lines.
    else c.out(plan.hasChanges ? `\nPlan: 0 to create, 0 to update, ${plan.removals.length} to delete.` : `No changes. Nothing of ${what} to remove.`);
    return 0;
  }
  if (!c.approved) {
    c.finish();
    const where = c.conn.target === 'embedded' ? 'the embedded server' : c.conn.url;
    const yes = await c.confirm!(`Remove these ${plan.removals.length} objects of ${what} from ${where}? Only 'yes' is accepted: `);
    if (!yes) {
      c.err('destroy declined: nothing was removed');
      return 1;
    }
  }
  const removed = await destroyPlanned(decl, plan, o);
  c.finish();
  const gone = removed.filter((r) => r.outcome === 'gone').length;
  if (c.json) c.out(JSON.stringify({ ...doc, removed, warnings: c.warnings }));
  else c.out(`\nDestroy complete! Resources: ${removed.length - gone} destroyed${gone ? ` (${gone} were already gone)` : ''}.`);
  return 0;
}
