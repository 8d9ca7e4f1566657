// `plan FILE`, `apply FILE` and `destroy FILE`: the command line's side of the engine's run session
// (engine/session.ts). Settings come from flags, then APPLIANCE_FORGE_* variables; without a URL the
// embedded server serves the run. Exit 0 only on success, 2 for an invalid file (or usage), 1 otherwise; 130 when interrupted.
import { debugLogOn } from '../debug-log';
import { closingLine, formatPlan, formatProblem, formatProblems, formatRemovals, listProblems, type Problem, SecretSet } from '../engine';
import { runDeclaration } from '../engine/session';
import { type CliIo, processIo } from './cli-io';
import { UsageError } from './command';
import { declarationHelp, type DeclarationMode, parseDeclarationArgs } from './declaration-options';
import { destroyClosing, destroyJson, formatFiles, formatResult } from './declaration-output';
import { applyDocument, planDocument } from '../engine/run-document';
import { routeBuildNotes } from '../imaging';
import { openLogFile } from './log-file';
import { varsOf } from './options';
import { createRenderer, jsonLines, renderMode, useColor } from './progress';
import { connectionLine, serviceSettings } from './service-settings';
import { packageVersion } from './version';

export type { CliIo } from './cli-io';
export { declarationHelp, declarationOptions, type DeclarationMode } from './declaration-options';

export async function runDeclarationCommand(mode: DeclarationMode, args: readonly string[], io: CliIo = processIo()): Promise<number> {
  const warn = (m: string) => io.stderr.write(`appliance-forge ${mode}: warning: ${m}\n`);
  const parsed = parseDeclarationArgs(mode, args, warn);
  if (parsed === 'help') {
    io.stdout.write(declarationHelp(mode));
    return 0;
  }
  const { values, file, selection, timeoutMs } = parsed;
  const env = io.env;
  const json = values.json === true;
  const quiet = values.quiet === true;
  // terraform plan -detailed-exitcode: 0 no changes, 2 changes present, 1 any error.
  const detailed = values['detailed-exitcode'] === true;
  // As terraform destroy: removing needs a yes from a person at a terminal, or --auto-approve; a JSON
  // reader is a program, so --json needs --auto-approve too. Refused before anything is read.
  const approved = values['auto-approve'] === true;
  const dryRun = values['dry-run'] === true;
  if (mode === 'destroy' && !approved && !dryRun && (json || !io.confirm)) {
    throw new UsageError(`${json ? 'with --json' : 'without a terminal'} there is no one to confirm the removals: add --auto-approve to remove without asking, or --dry-run to see what would go`);
  }
  const secrets = new SecretSet();
  // APPLIANCE_FORGE_LOG=debug (and the log file): one line per HTTP exchange.
  const traced = debugLogOn(env) || values['log-file'] !== undefined;
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
    if (debugLogOn(env)) {
      if (stderrJson) stderrJson.log('debug', s);
      else err(`debug: ${s}`);
    }
    log?.log('debug', s);
  }
  const renderer = stderrJson && !quiet ? stderrJson : createRenderer(renderMode(io.stderr, env, { silent: json || quiet }), io.stderr, { color: useColor(env) });
  const ac = new AbortController();
  const release = io.onInterrupt?.(() => ac.abort()) ?? (() => {});
  let warnings: readonly Problem[] = [];
  let what = '';
  let declined = false;
  // An embedded server builds in this process: its stage notes join this command's debug output.
  const unroute = traced ? routeBuildNotes(debug) : undefined;
  try {
    const r = await runDeclaration({
      mode, file, builders: selection, connection: settings, secrets, signal: ac.signal, prune: values.prune === true, outputDir: values.output,
      load: { env, vars: varsOf(values), allowOutsideSources: values['allow-outside-sources'] === true, publish: values['no-publish'] !== true },
      // --timeout bounds the whole run as SIGINT does: the running jobs are cancelled.
      timeout: timeoutMs === undefined ? undefined : { ms: timeoutMs, bound: `${values.timeout} (--timeout)` },
    }, {
      onEvent: (event) => {
        renderer.event(event);
        log?.event(event);
      },
      loaded: (l) => {
        warnings = l.problems;
        what = `${l.declaration.stack.name} ${l.declaration.stack.version}`;
      },
      selected: () => {
        if (!json) for (const l of formatProblems(warnings)) err(l);
        for (const w of warnings) log?.log('warning', formatProblem(w));
      },
      connected: (conn) => {
        const using = connectionLine(conn, settings, env, { debug, urlGiven, target });
        if (conn.target === 'embedded' && !json && !quiet) err(using);
        log?.log('info', using);
      },
      // destroy shows the removals (stdout), then asks on the terminal unless approved.
      approve: async (plan, conn) => {
        if (!json) for (const l of formatRemovals(plan.removals, plan.kept)) out(l);
        if (dryRun || !plan.hasChanges) return false;
        if (approved) return true;
        renderer.finish();
        const where = conn.target === 'embedded' ? 'the embedded server' : conn.url;
        declined = !(await io.confirm?.(`Remove these ${plan.removals.length} objects of ${what} from ${where}? Only 'yes' is accepted: `));
        return !declined;
      },
    });
    renderer.finish();
    if (!r.ok) {
      const f = r.failure;
      if (json) out(JSON.stringify({ ok: false, mode, target, error: { message: f.message, ...listProblems(f.problems) }, warnings }));
      // The problems in file order, warnings too (an unknown field next to an error is often its cause).
      else if (f.problems.length) err([f.message.split('\n')[0] ?? '', ...formatProblems(f.problems)].join('\n'));
      else err(`${mode} failed: ${f.message}`);
      // The log keeps what the console bounds: every problem, and where a failure came from.
      log?.log('error', f.message);
      for (const p of f.problems) log?.log(p.severity, formatProblem(p));
      if (r.error instanceof Error && r.error.stack) log?.log('debug', r.error.stack);
      return f.interrupted ? 130 : detailed ? 1 : f.exitCode;
    }
    if (r.mode === 'plan') {
      if (json) out(JSON.stringify({ ...planDocument(target, r.plan, r.declaration.builders, secrets), warnings }));
      else for (const l of [...formatPlan(r.plan), '', closingLine('plan', r.plan)]) out(l);
      return detailed && r.plan.hasChanges ? 2 : 0;
    }
    if (r.mode === 'apply') {
      const { result, files } = r;
      // The Action's `result` document (engine/run-document.ts), then the engine's own result and files as before.
      if (json) out(JSON.stringify({ ...applyDocument(target, result.plan, result.applianceUri, result.images, files ?? [], secrets), result, files, warnings }));
      else for (const l of [...formatResult(result), ...formatFiles(files), '', closingLine('apply', result.plan)]) out(l);
      return 0;
    }
    if (declined) {
      err('destroy declined: nothing was removed');
      return 1;
    }
    if (json) out(JSON.stringify({ ...destroyJson(target, r.plan, secrets), removed: r.removed, warnings }));
    else out(destroyClosing(r.plan, what, r.removed));
    return 0;
  } finally {
    unroute?.();
    release();
    log?.close();
  }
}
