// `plan FILE`, `apply FILE` and `destroy FILE`: a thin layer over the engine (style example 11). Settings
// come from flags, then APPLIANCE_FORGE_* variables; without a URL the embedded server serves the run.
// Exit 0 only on success, 2 for an invalid file (or usage), 1 otherwise; 130 when interrupted.
import { createInterface } from 'node:readline';
import {
  applyDeclaration, type Declaration, destroyPlanned, type EngineOptions, formatPlan, formatProblem, formatRemovals, loadDeclaration,
  planChanges, planDeclaration, planDestroy, planSummary, removalChanges, saveImages,
  type ApplyResult, type Plan, type Problem, type SavedImage, SecretSet,
} from '../engine';
import { proxyFromEnv, type TraceEntry } from '../client';
import { connect, type ConnectSettings, type Connection } from '../engine/connect';
import { settingsFromEnv } from '../engine/settings-env';
import { describeFailure } from '../engine/failure';
import { UsageError } from './command';
import { readCredentialsFile } from './credentials-file';
import { CONNECTION_HELP, CONNECTION_OPTIONS, DATA_DIR_OPTION, HELP_OPTION, parseCommandArgs, QUIET_OPTION, SOURCES_OPTION } from './options';
import { createRenderer, renderMode, useColor, type Out } from './progress';

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

/** Options only some modes take, and which: any other mode refuses them as a usage error. */
const MODE_ONLY: Readonly<Record<string, readonly DeclarationMode[]>> = {
  output: ['apply'], 'detailed-exitcode': ['plan'], 'no-publish': ['plan', 'apply'], prune: ['plan', 'apply'],
  'auto-approve': ['destroy'], 'dry-run': ['destroy'],
};

const MODE_HELP: Readonly<Record<DeclarationMode, string>> = {
  plan: `      --no-publish       plan without the publications
      --prune            also plan the removal of superseded images and their publications
      --detailed-exitcode  exit 0 no changes, 2 changes present, 1 error
`,
  apply: `      --no-publish       apply without the publications
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

output:
      --json             one JSON document on stdout, nothing else${mode === 'apply' ? '' : ' (changes: one object per change)'}
  -q, --quiet            no progress and no notes on stderr (warnings and errors stay)
${MODE_HELP[mode]}
exit status: ${mode === 'plan' ? '0 ok (with --detailed-exitcode: 0 no changes, 2 changes, 1 error), ' : mode === 'destroy' ? '0 ok (or nothing to remove), 1 declined or failed, ' : '0 ok, '}2 invalid file or usage, 1 other failure, 130 interrupted
environment: NO_COLOR, TERM=dumb (no colours, no redrawn bars); APPLIANCE_FORGE_LOG=debug (a line per request on stderr)
`;
}

/** The connection flags as parsed (CONNECTION_OPTIONS and DATA_DIR_OPTION). */
export interface ConnectionValues {
  readonly url?: string | undefined;
  readonly user?: string | undefined;
  readonly 'api-key'?: string | undefined;
  readonly 'secret-key'?: string | undefined;
  readonly password?: string | undefined;
  readonly credentials?: string | undefined;
  readonly 'data-dir'?: string | undefined;
}

/**
 * Flags, then the credentials file given, then the environment; a file's credentials come whole
 * (its password is not mixed with a key pair from the environment). Credentials join `secrets`.
 */
export function connectionSettings(
  values: ConnectionValues, env: CliIo['env'], secrets: SecretSet, o: { warn: (m: string) => void; debug: (line: string) => void },
): ConnectSettings {
  const c = values.credentials !== undefined ? readCredentialsFile(values.credentials, o.warn) : undefined;
  const e = settingsFromEnv(env);
  const fromEnv = !c;
  const settings = {
    url: values.url ?? c?.url ?? e.url,
    user: values.user ?? c?.user ?? e.user,
    apiKey: values['api-key'] ?? c?.apiKey ?? (fromEnv ? e.apiKey : undefined),
    secretKey: values['secret-key'] ?? c?.secretKey ?? (fromEnv ? e.secretKey : undefined),
    password: values.password ?? c?.password ?? (fromEnv ? e.password : undefined),
    dataDir: values['data-dir'],
    // APPLIANCE_FORGE_LOG=debug: one stderr line per HTTP exchange, without the signature (client/trace.ts).
    ...(env.APPLIANCE_FORGE_LOG === 'debug'
      ? { onTrace: (t: TraceEntry) => o.debug(`debug: ${t.method} ${t.path} ${t.status ?? t.error} ${t.ms}ms`) }
      : {}),
  };
  secrets.add(settings.secretKey);
  secrets.add(settings.password);
  return settings;
}

/** Connects, and says on stderr which proxy a debug run goes through, or that the embedded server serves it. */
export async function openConnection(
  settings: ConnectSettings, env: CliIo['env'], secrets: SecretSet, o: { err: (line: string) => void; notes: boolean },
): Promise<Connection> {
  const conn = await connect(settings);
  secrets.addAll(conn.secrets.list());
  // The proxy in use (credentials shown as ***); the embedded server is never reached through one.
  if (settings.onTrace && conn.target === 'remote') {
    const noProxy = env.no_proxy ?? env.NO_PROXY;
    for (const p of proxyFromEnv(env)) o.err(`debug: proxy ${p}${noProxy ? ` (NO_PROXY=${noProxy})` : ''}`);
  }
  if (conn.target === 'embedded' && o.notes) o.err(`no service URL: using the embedded server (${conn.url}, data in ${settings.dataDir ?? './.appliance-forge'})`);
  return conn;
}

export async function runDeclarationCommand(mode: DeclarationMode, args: readonly string[], io: CliIo = processIo()): Promise<number> {
  const usage = declarationHelp(mode);
  const { values, positionals } = parseCommandArgs(args, {
    ...CONNECTION_OPTIONS, ...DATA_DIR_OPTION, ...HELP_OPTION, ...QUIET_OPTION, ...SOURCES_OPTION,
    json: { type: 'boolean' }, 'no-publish': { type: 'boolean' }, prune: { type: 'boolean' },
    output: { type: 'string', short: 'o' }, 'detailed-exitcode': { type: 'boolean' },
    'auto-approve': { type: 'boolean' }, 'dry-run': { type: 'boolean' },
  }, { usage, positionals: true, warn: (m) => io.stderr.write(`appliance-forge ${mode}: warning: ${m}\n`) });
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
  const file = positionals[0]!;
  const env = io.env;
  const json = values.json === true;
  const quiet = values.quiet === true;
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
  const settings = connectionSettings(values, env, secrets, { warn, debug: (l) => err(l) });
  const err = (s: string) => io.stderr.write(`${secrets.mask(s)}\n`);
  const out = (s: string) => io.stdout.write(`${secrets.mask(s)}\n`);
  const renderer = createRenderer(renderMode(io.stderr, env, { silent: json || quiet }), io.stderr, { color: useColor(env) });
  const ac = new AbortController();
  const release = io.onInterrupt?.(() => ac.abort()) ?? (() => {});
  let conn: Connection | undefined;
  let warnings: readonly Problem[] = [];
  try {
    const loaded = loadDeclaration(file, { env, allowOutsideSources: values['allow-outside-sources'] === true });
    secrets.addAll(loaded.declaration.secrets);
    warnings = loaded.problems;
    if (!json) for (const w of warnings) err(formatProblem(w));
    conn = await openConnection(settings, env, secrets, { err, notes: !json && !quiet });
    const o = {
      client: conn.client, secrets, signal: ac.signal, publish: values['no-publish'] !== true, prune: values.prune === true, onEvent: renderer.event,
    };
    if (mode === 'destroy') {
      return await destroy(loaded.declaration, o, {
        conn, json, approved, dryRun: values['dry-run'] === true, warnings, out, err, finish: renderer.finish, confirm: io.confirm,
      });
    }
    if (mode === 'plan') {
      const { plan } = await planDeclaration(loaded.declaration, o);
      renderer.finish();
      if (json) out(JSON.stringify({ ok: true, mode, ...planJson(plan, secrets), warnings }));
      else for (const l of formatPlan(plan)) out(l);
      return detailed && plan.hasChanges ? 2 : 0;
    }
    const r = await applyDeclaration(loaded.declaration, o);
    const files = values.output === undefined ? undefined : await saveImages(conn.client, r.images, values.output, o);
    renderer.finish();
    if (json) out(JSON.stringify({ ok: true, mode, ...planJson(r.plan, secrets), result: r, ...(files ? { files } : {}), warnings }));
    else for (const l of [...formatResult(r), ...formatFiles(files)]) out(l);
    return 0;
  } catch (e) {
    renderer.finish();
    const f = describeFailure(e, secrets);
    if (json) out(JSON.stringify({ ok: false, mode, error: { message: f.message, problems: f.problems }, warnings }));
    // Every problem in file order, warnings too (an unknown field next to an error is often its cause).
    else if (f.problems.length) err([f.message.split('\n')[0]!, ...f.problems.map(formatProblem)].join('\n'));
    else err(`${mode} failed: ${f.message}`);
    return f.interrupted ? 130 : detailed ? 1 : f.exitCode;
  } finally {
    release();
    await conn?.close();
  }
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
    conn: Connection; json: boolean; approved: boolean; dryRun: boolean; warnings: readonly Problem[];
    out: (s: string) => void; err: (s: string) => void; finish: () => void; confirm?: CliIo['confirm'];
  },
): Promise<number> {
  const plan = await planDestroy(decl, o);
  const what = `${decl.stack.name} ${decl.stack.version}`;
  const doc = {
    ok: true, mode: 'destroy',
    summary: { changes: plan.hasChanges, remove: plan.removals.length, keep: plan.kept.length },
    changes: removalChanges(plan.removals, plan.kept, o.secrets),
  };
  if (!c.json) for (const l of formatRemovals(plan.removals, plan.kept)) c.out(l);
  if (c.dryRun || !plan.hasChanges) {
    c.finish();
    if (c.json) c.out(JSON.stringify({ ...doc, warnings: c.warnings }));
    else c.out(plan.hasChanges ? `dry run: ${plan.removals.length} objects of ${what} would be removed` : `nothing to remove for ${what}`);
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
  else c.out(`removed ${removed.length - gone} objects of ${what}${gone ? ` (${gone} were already gone)` : ''}`);
  return 0;
}
