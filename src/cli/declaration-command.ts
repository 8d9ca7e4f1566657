// `plan FILE` and `apply FILE`: a thin layer over the engine (style example 11). Settings come from
// flags, then APPLIANCE_FORGE_* variables; without a URL the embedded server serves the run.
// Exit 0 only on success, 2 for an invalid file (or usage), 1 otherwise; 130 when interrupted.
import {
  applyDeclaration, closingLine, type EngineEvent, formatPlan, formatProblem, formatProblems, listProblems, loadDeclaration, planChanges,
  planDeclaration, planSummary, saveImages, selectBuilders, selectorList, type ApplyResult, type Plan, type Problem, type SavedImage, SecretSet,
} from '../engine';
import { proxyFromEnv, type TraceEntry } from '../client';
import { chooseTarget, connect, ConnectSettingsError, type Connection, EMBEDDED, publicTarget } from '../engine/connect';
import { CONNECTION_ENV, CONNECTION_SETTINGS, CREDENTIALS, type ConnectionSetting, type EnvSettings, settingsFromEnv } from '../engine/settings-env';
import { describeFailure, type Deadline } from '../engine/failure';
import { UsageError } from './command';
import { readCredentialsFile } from './credentials-file';
import { parseDuration } from './duration';
import { openLogFile } from './log-file';
import {
  CONNECTION_HELP, CONNECTION_OPTIONS, DATA_DIR_OPTION, HELP_OPTION, parseCommandArgs, QUIET_OPTION, SOURCES_OPTION, VARS_HELP, VARS_OPTIONS, varsOf,
} from './options';
import { createRenderer, jsonLines, renderMode, useColor, type Out } from './progress';
import { packageVersion } from './version';

export interface CliIo {
  readonly stdout: Out;
  readonly stderr: Out;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** SIGINT and SIGTERM; tests pass their own. */
  readonly onInterrupt?: (abort: () => void) => () => void;
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
});

const SUMMARY = {
  plan: 'Says what apply would create, change, regenerate or publish for the declaration FILE; changes nothing.',
  apply: 'Brings the service to the declaration FILE: uploads the software, builds the appliance, generates and publishes its images.',
} as const;

/** The options of plan and apply (one object: each refuses the other's own option with a message). */
export const DECLARATION_OPTIONS = {
  ...CONNECTION_OPTIONS, ...DATA_DIR_OPTION, ...HELP_OPTION, ...QUIET_OPTION, ...SOURCES_OPTION, ...VARS_OPTIONS,
  json: { type: 'boolean' }, 'no-publish': { type: 'boolean' }, 'log-file': { type: 'string' },
  output: { type: 'string', short: 'o' }, 'detailed-exitcode': { type: 'boolean' },
  only: { type: 'string', multiple: true }, except: { type: 'string', multiple: true }, timeout: { type: 'string' },
} as const;

export function declarationHelp(mode: 'plan' | 'apply'): string {
  return `usage: appliance-forge ${mode} FILE [options]

${SUMMARY[mode]}

${CONNECTION_HELP}
      --data-dir DIR     data of the embedded server (default ./.appliance-forge; --data is a deprecated alias)
      --allow-outside-sources  upload bundle sources outside the declaration's folder (absolute, ../, links out)

${VARS_HELP}

builders and time:
      --only NAME,…      run only these builders: types as written in the file (case-insensitive) or indexes
                         (0-based); repeatable
      --except NAME,…    run every builder but these
      --timeout DURATION bound the whole run, e.g. 90s, 30m, 1h30m: at the end the running jobs are cancelled
                         and the run fails (exit 1); default none (each job wait gives up after 1h)

output:
      --json             one JSON document on stdout${mode === 'plan' ? ' (changes: one object per change)' : ''}; progress on
                         stderr as JSON Lines (one object per line: type, time, resource, message…)
  -q, --quiet            no progress and no notes on stderr (warnings and errors stay)
      --log-file PATH    append the whole run to PATH as JSON Lines (events, request trace, result; no secret)
      --no-publish       plan and apply without the publications (nor the variables they read)
${mode === 'apply' ? '  -o, --output DIR       download every image into DIR (sha256 checked)\n' : '      --detailed-exitcode  exit 0 no changes, 2 changes present, 1 error\n'}
exit status: ${mode === 'plan' ? '0 ok (with --detailed-exitcode: 0 no changes, 2 changes, 1 error), ' : '0 ok, '}2 invalid file or usage, 1 other failure, 130 interrupted
environment: NO_COLOR, TERM=dumb (no colours, no redrawn bars); APPLIANCE_FORGE_LOG=debug (a line per request on stderr)
Terraform's and Packer's single dash works too: -var, -var-file, -only, -except, -json.
`;
}

export async function runDeclarationCommand(mode: 'plan' | 'apply', args: readonly string[], io: CliIo = processIo()): Promise<number> {
  const usage = declarationHelp(mode);
  const { values, positionals } = parseCommandArgs(args, DECLARATION_OPTIONS,
    { usage, positionals: true, warn: (m) => io.stderr.write(`appliance-forge ${mode}: warning: ${m}
`) });
  if (values.help) {
    io.stdout.write(usage);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError(`${mode} takes one declaration file\n${usage}`);
  if (mode === 'plan' && values.output !== undefined) throw new UsageError(`--output goes with apply: a plan builds nothing\n${usage}`);
  if (mode === 'apply' && values['detailed-exitcode']) throw new UsageError(`--detailed-exitcode goes with plan\n${usage}`);
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
  const secrets = new SecretSet();
  const warn = (m: string) => io.stderr.write(`appliance-forge ${mode}: warning: ${m}\n`);
  const { settings: given, origins } = connectionSettings(values, env, warn);
  let url: string;
  try {
    url = chooseTarget(given.url, origins, { url: `--url URL (or ${CONNECTION_ENV.url})`, embedded: `--url ${EMBEDDED}` });
  } catch (e) {
    if (e instanceof ConnectSettingsError) throw new UsageError(e.message);
    throw e;
  }
  const target = publicTarget(url);
  const settings = {
    ...given,
    url,
    dataDir: values['data-dir'],
    // APPLIANCE_FORGE_LOG=debug (and the log file): one line per HTTP exchange, without the signature (client/trace.ts).
    ...(env.APPLIANCE_FORGE_LOG === 'debug' || values['log-file'] !== undefined
      ? { onTrace: (t: TraceEntry) => debug(`${t.method} ${t.path} ${t.status ?? t.error} ${t.ms}ms`) }
      : {}),
  };
  secrets.add(settings.secretKey);
  secrets.add(settings.password);
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
    const loaded = loadDeclaration(file, { env, vars, allowOutsideSources: values['allow-outside-sources'] === true, publish });
    secrets.addAll(loaded.declaration.secrets);
    warnings = loaded.problems;
    // Builders keep their index in the declaration: the engine and the result name them by it.
    const declaration = { ...loaded.declaration, builders: selectBuilders(loaded.declaration.builders, selection.selectors, selection) };
    if (!json) for (const l of formatProblems(warnings)) err(l);
    for (const w of warnings) log?.log('warning', formatProblem(w));
    conn = await connect(settings);
    secrets.addAll(conn.secrets.list());
    // The proxy in use (credentials shown as ***); the embedded server is never reached through one.
    if (settings.onTrace && conn.target === 'remote') {
      const noProxy = env.no_proxy ?? env.NO_PROXY;
      for (const p of proxyFromEnv(env)) debug(`proxy ${p}${noProxy ? ` (NO_PROXY=${noProxy})` : ''}`);
    }
    const using = conn.target === 'embedded'
      ? `${given.url ? `url ${EMBEDDED}` : 'no service URL'}: using the embedded server (${conn.url}, data in ${settings.dataDir ?? './.appliance-forge'})`
      : `service ${target}`;
    if (conn.target === 'embedded' && !json && !quiet) err(using);
    log?.log('info', using);
    const o = {
      client: conn.client, secrets, signal, publish, onEvent,
      // A job wait gives up no sooner than the run's bound.
      ...(timeoutMs !== undefined ? { jobTimeoutMs: timeoutMs } : {}),
    };
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
  return lines;
}
