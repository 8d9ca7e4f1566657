// `plan FILE` and `apply FILE`: a thin layer over the engine (style example 11). Settings come from
// flags, then APPLIANCE_FORGE_* variables; without a URL the embedded server serves the run.
// Exit 0 only on success, 2 for an invalid file (or usage), 1 otherwise; 130 when interrupted.
import { parseArgs } from 'node:util';
import {
  applyDeclaration, formatPlan, formatProblem, loadDeclaration, planDeclaration, planSummary, saveImages,
  type ApplyResult, type Plan, type Problem, type SavedImage, SecretSet,
} from '../engine';
import { connect, type Connection } from '../engine/connect';
import { describeFailure } from '../engine/failure';
import { UsageError } from './command';
import { createRenderer, type Out } from './progress';

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

const USAGE = (mode: string) =>
  `usage: appliance-forge ${mode} FILE [--url URL --user LOGIN (--api-key KEY --secret-key KEY | --password PW)] ` +
  `[--json] [--no-publish] [--data-dir DIR]${mode === 'apply' ? ' [--output DIR]' : ''}`;

export async function runDeclarationCommand(mode: 'plan' | 'apply', args: readonly string[], io: CliIo = processIo()): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      url: { type: 'string' }, user: { type: 'string' }, 'api-key': { type: 'string' }, 'secret-key': { type: 'string' },
      password: { type: 'string' }, json: { type: 'boolean' }, 'no-publish': { type: 'boolean' }, 'data-dir': { type: 'string' },
      output: { type: 'string', short: 'o' }, help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    io.stdout.write(`${USAGE(mode)}\n`);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError(`${mode} takes one declaration file\n${USAGE(mode)}`);
  if (mode === 'plan' && values.output !== undefined) throw new UsageError(`--output goes with apply: a plan builds nothing\n${USAGE(mode)}`);
  const file = positionals[0]!;
  const env = io.env;
  const json = values.json === true;
  const secrets = new SecretSet();
  const settings = {
    url: values.url ?? env.APPLIANCE_FORGE_URL,
    user: values.user ?? env.APPLIANCE_FORGE_USER,
    apiKey: values['api-key'] ?? env.APPLIANCE_FORGE_API_KEY,
    secretKey: values['secret-key'] ?? env.APPLIANCE_FORGE_SECRET_KEY,
    password: values.password ?? env.APPLIANCE_FORGE_PASSWORD,
    dataDir: values['data-dir'],
  };
  secrets.add(settings.secretKey);
  secrets.add(settings.password);
  const err = (s: string) => io.stderr.write(`${secrets.mask(s)}\n`);
  const out = (s: string) => io.stdout.write(`${secrets.mask(s)}\n`);
  const renderer = createRenderer(json ? 'silent' : io.stderr.isTTY ? 'tty' : 'plain', io.stderr);
  const ac = new AbortController();
  const release = io.onInterrupt?.(() => ac.abort()) ?? (() => {});
  let conn: Connection | undefined;
  let warnings: readonly Problem[] = [];
  try {
    const loaded = loadDeclaration(file, { env });
    secrets.addAll(loaded.declaration.secrets);
    warnings = loaded.problems;
    if (!json) for (const w of warnings) err(formatProblem(w));
    conn = await connect(settings);
    secrets.addAll(conn.secrets.list());
    if (conn.target === 'embedded' && !json) err(`no service URL: using the embedded server (${conn.url}, data in ${settings.dataDir ?? './.appliance-forge'})`);
    const o = { client: conn.client, secrets, signal: ac.signal, publish: values['no-publish'] !== true, onEvent: renderer.event };
    if (mode === 'plan') {
      const { plan } = await planDeclaration(loaded.declaration, o);
      renderer.finish();
      if (json) out(JSON.stringify({ ok: true, mode, ...planJson(plan), warnings }));
      else for (const l of formatPlan(plan)) out(l);
      return 0;
    }
    const r = await applyDeclaration(loaded.declaration, o);
    const files = values.output === undefined ? undefined : await saveImages(conn.client, r.images, values.output, o);
    renderer.finish();
    if (json) out(JSON.stringify({ ok: true, mode, ...planJson(r.plan), result: r, ...(files ? { files } : {}), warnings }));
    else for (const l of [...formatResult(r), ...formatFiles(files)]) out(l);
    return 0;
  } catch (e) {
    renderer.finish();
    const f = describeFailure(e, secrets);
    if (json) out(JSON.stringify({ ok: false, mode, error: { message: f.message, problems: f.problems }, warnings }));
    else err(f.problems.length ? f.message : `${mode} failed: ${f.message}`);
    return f.interrupted ? 130 : f.exitCode;
  } finally {
    release();
    await conn?.close();
  }
}

function planJson(plan: Plan) {
  return { summary: planSummary(plan), plan: formatPlan(plan) };
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
