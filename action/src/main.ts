// The GitHub Action: a thin layer over the engine (style example 11). Masks every secret before
// anything else is logged, groups the log by phase, turns declaration problems into annotations,
// writes outputs and a job summary, and fails the step on any error (main is awaited and every
// rejection, Error or not, ends in setFailed).
import * as core from '@actions/core';
import {
  applyDeclaration, collectVars, DeclarationError, type EngineEvent, formatPlan, formatProblems, listProblems, loadDeclaration, type Plan, planDeclaration,
  type Problem, saveImages, SecretSet, selectBuilders, selectorList, validateDeclarationFile,
} from '../../src/engine';
import { chooseTarget, connect, type Connection, EMBEDDED, publicTarget } from '../../src/engine/connect';
import type { Vars } from '../../src/engine/env-refs';
import { describeFailure, type Deadline } from '../../src/engine/failure';
import { messageOf } from '../../src/errors';
import { embeddedDataDir } from './data-dir';
import { giveBack, installImageTools, rerunAsRoot, takeBack } from './host';
import { SERVICE_VERSION } from '../../src/server/version';
import { type ActionResult, applyResult, planResult, type ResultEntry, type ValidateResult } from './result';

interface Inputs {
  file: string;
  /** The service's base URL, or `embedded`. */
  url: string;
  user: string;
  apiKey: string;
  secretKey: string;
  password: string;
  mode: 'apply' | 'plan' | 'validate';
  /** validate: unknown fields are errors. */
  strict: boolean;
  publish: boolean;
  /** apply: remove superseded images and their publications after a successful apply. */
  prune: boolean;
  timeoutMinutes: number;
  /** Where apply downloads the built images (sha256 checked); empty: no download. */
  outputDir: string;
  /** Builder types or indexes this step runs (builders.ts); empty: all. */
  builders: string;
  /** Bundle sources may lie outside the declaration's folder (engine/bundle-source.ts). */
  allowOutsideSources: boolean;
  /** `${var:NAME}` values: the var-files input, then the vars input (engine/vars.ts). */
  vars: Vars;
}

/** An input's non-blank lines, trimmed. */
const lines = (text: string) => text.split('\n').map((l) => l.trim()).filter(Boolean);

/** The inputs that name a user or a credential: with one of them, an empty url names them. */
const CREDENTIAL_INPUTS = ['user', 'api-key', 'secret-key', 'password'] as const;

/**
 * A boolean input as `core.getBooleanInput` reads it (YAML 1.2 core schema: true, True, TRUE, false,
 * False, FALSE); anything else fails the step naming the input. Empty: `fallback`, action.yml's default.
 */
function booleanInput(name: string, fallback: boolean): boolean {
  const text = core.getInput(name);
  if (text === '') return fallback;
  try {
    return core.getBooleanInput(name);
  } catch {
    throw new Error(`input ${name} must be true or false (YAML 1.2: true, True, TRUE, false, False or FALSE), not ${JSON.stringify(text.slice(0, 40))}`);
  }
}

function readInputs(secrets: SecretSet): Inputs {
  // Credentials are masked first, before a line could show them.
  const secretKey = core.getInput('secret-key');
  const password = core.getInput('password');
  for (const s of [secretKey, password]) if (s) core.setSecret(s);
  secrets.add(secretKey);
  secrets.add(password);
  const mode = core.getInput('mode') || 'apply';
  if (mode !== 'apply' && mode !== 'plan' && mode !== 'validate') throw new Error(`input mode must be apply, plan or validate, not ${JSON.stringify(mode)}`);
  const minutes = Number(core.getInput('timeout-minutes') || '60');
  if (!Number.isFinite(minutes) || minutes <= 0) throw new Error('input timeout-minutes must be a positive number');
  // An unset variable or secret gives an empty url: that must not quietly become a local build.
  // validate is offline: it needs none.
  const url = core.getInput('url');
  if (!url && mode !== 'validate') {
    // With a credential the error names it, as the command line's does; without, it is an error all the same.
    const given = CREDENTIAL_INPUTS.filter((i) => core.getInput(i) !== '').map((i) => `input ${i}`);
    chooseTarget(url, given, { url: "input url (the service's URL)", embedded: `url: ${EMBEDDED}` });
    throw new Error(`input url is empty: give the service's URL, or ${EMBEDDED} to build with the embedded reference server inside this step`);
  }
  return {
    file: core.getInput('file', { required: true }),
    url,
    user: core.getInput('user'),
    apiKey: core.getInput('api-key'),
    secretKey,
    password,
    mode,
    publish: booleanInput('publish', true),
    prune: booleanInput('prune', false),
    strict: booleanInput('strict', false),
    timeoutMinutes: minutes,
    outputDir: core.getInput('output-dir'),
    builders: core.getInput('builders'),
    allowOutsideSources: booleanInput('allow-outside-sources', false),
    vars: collectVars({ files: lines(core.getInput('var-files')), assignments: lines(core.getInput('vars')) }, { assignment: 'input vars:', file: 'input var-files:' }),
  };
}

/** Phases become log groups; progress is logged at each quarter so that logs stay short. */
function logEvents(): { onEvent: (e: EngineEvent) => void; close: () => void } {
  let open = false;
  const quarters = new Map<string, number>();
  const close = () => {
    if (open) core.endGroup();
    open = false;
  };
  return {
    close,
    onEvent(e) {
      if (e.type === 'phase') {
        close();
        core.startGroup(e.title);
        open = true;
      } else if (e.type === 'step') core.info(e.message);
      else if (e.type === 'progress') {
        const q = Math.floor(e.percentage / 25);
        if (q > (quarters.get(e.id) ?? -1) && q < 4) {
          quarters.set(e.id, q);
          core.info(`${e.label}: ${e.percentage}%`);
        }
      } else core.info(`${e.label}: ${e.ok ? 'done' : `failed${e.message ? `: ${e.message}` : ''}`}`);
    },
  };
}

async function writeSummary(title: string, plan: Plan, entries: readonly ResultEntry[] | undefined): Promise<void> {
  if (!process.env.GITHUB_STEP_SUMMARY) return;
  const s = core.summary.addHeading(title, 3);
  if (entries) {
    s.addTable([
      [{ data: 'Format', header: true }, { data: 'Image', header: true }, { data: 'Size', header: true }, { data: 'sha256', header: true }, { data: 'Image reused', header: true }],
      ...entries.map((e) => [e.format, e.imageUri ?? '', e.size === null ? '' : `${(e.size / 1048576).toFixed(1)} MiB`, e.sha256 ?? '', e.reused ? 'yes' : 'no']),
    ]);
    const pubs = entries.filter((e) => e.displayName !== null);
    if (pubs.length) {
      s.addHeading('Publications', 4).addTable([
        [{ data: 'Display name', header: true }, { data: 'Format', header: true }, { data: 'Cloud id', header: true }, { data: 'Reused', header: true }],
        ...pubs.map((e) => [e.displayName!, e.format, e.cloudId ?? '', e.publicationReused ? 'yes' : 'no']),
      ]);
    }
  } else {
    s.addCodeBlock(formatPlan(plan).join('\n'));
  }
  await s.write();
}

/** Problems as annotations at their lines (the first of them: problems.ts); GitHub shows 10 per kind and step. */
function annotate(problems: readonly Problem[]): void {
  for (const p of listProblems(problems).problems) {
    const props = { file: p.file, startLine: p.line, startColumn: p.column };
    if (p.severity === 'error') core.error(p.message, props);
    else core.warning(p.message, props);
  }
}

/** `mode: validate`: the engine's offline check (as `appliance-forge validate`); fails the step on errors. */
async function validateStep(inputs: Inputs): Promise<void> {
  const report = validateDeclarationFile(inputs.file, { strict: inputs.strict, allowOutsideSources: inputs.allowOutsideSources, vars: inputs.vars });
  for (const l of formatProblems(report.problems, report.more)) core.info(l);
  annotate(report.problems);
  const result: ValidateResult = { mode: 'validate', ...report };
  core.setOutput('result', JSON.stringify(result));
  if (process.env.GITHUB_STEP_SUMMARY) {
    const s = core.summary.addHeading(`Validation of ${inputs.file}: ${report.ok ? 'valid' : 'invalid'}`, 3)
      .addRaw(`${report.errors} error${report.errors === 1 ? '' : 's'}, ${report.warnings} warning${report.warnings === 1 ? '' : 's'}`, true);
    if (report.problems.length) s.addCodeBlock(formatProblems(report.problems, report.more).join('\n'));
    await s.write();
  }
  if (!report.ok) core.setFailed(`${report.errors} error${report.errors === 1 ? '' : 's'} in ${inputs.file}`);
  else core.info(`${inputs.file}: valid (${report.warnings} warning${report.warnings === 1 ? '' : 's'})`);
}

/** The outputs both modes write: `result` (result.ts), `target`, `changes`, `appliance-uri` when known. */
function setResultOutputs(result: ActionResult): void {
  core.setOutput('result', JSON.stringify(result));
  core.setOutput('target', result.target);
  core.setOutput('changes', String(result.changes));
  if (result.applianceUri) core.setOutput('appliance-uri', result.applianceUri);
}

export async function run(): Promise<void> {
  const secrets = new SecretSet();
  const events = logEvents();
  let conn: Connection | undefined;
  let giveBackOnExit: string[] = [];
  const ac = new AbortController();
  let deadline: Deadline | undefined;
  // A cancelled workflow sends SIGINT, then SIGTERM: cancel the running jobs on the service.
  const onSignal = () => ac.abort();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const inputs = readInputs(secrets);
    if (inputs.mode === 'validate') {
      await validateStep(inputs);
      return;
    }
    const embedded = inputs.url === EMBEDDED;
    if (embedded && inputs.mode === 'apply') {
      // Builds run here with Debian's image tools, in the runner user's namespace or as root (host.ts).
      const code = rerunAsRoot((l) => core.info(l));
      if (code !== undefined) {
        process.exitCode = code;
        return;
      }
      installImageTools((l) => core.info(l));
    }
    // Outside the workspace (data-dir.ts); named after any re-run under sudo, by the process that uses it.
    const dataDir = embedded ? embeddedDataDir() : undefined;
    if (dataDir) {
      takeBack(dataDir);
      giveBackOnExit = [dataDir, inputs.outputDir].filter(Boolean);
    }
    const timeoutMs = inputs.timeoutMinutes * 60_000;
    deadline = { signal: AbortSignal.any([ac.signal, AbortSignal.timeout(timeoutMs)]), bound: `${inputs.timeoutMinutes} min (timeout-minutes)` };
    const { signal } = deadline;
    const loaded = loadDeclaration(inputs.file, { allowOutsideSources: inputs.allowOutsideSources, vars: inputs.vars, publish: inputs.publish });
    for (const s of loaded.declaration.secrets) core.setSecret(s);
    secrets.addAll(loaded.declaration.secrets);
    annotate(loaded.problems);
    if (embedded && (inputs.user || inputs.apiKey || inputs.secretKey || inputs.password)) {
      core.warning(`url is ${EMBEDDED}: the user and credential inputs are not used (the embedded server has its own local user)`);
    }
    // A selector that matches nothing fails before any server starts.
    const builders = selectBuilders(loaded.declaration.builders, selectorList(inputs.builders), { label: 'input builders' });
    if (builders.length < loaded.declaration.builders.length) core.info(`builders: ${builders.map((b) => `${b.index} ${b.type}`).join(', ')}`);
    conn = await connect({ url: inputs.url, user: inputs.user, apiKey: inputs.apiKey, secretKey: inputs.secretKey, password: inputs.password, dataDir });
    for (const s of conn.secrets.list()) if (!secrets.list().includes(s)) core.setSecret(s);
    secrets.addAll(conn.secrets.list());
    if (conn.target === 'embedded') core.info(`url ${EMBEDDED}: using the embedded reference server ${SERVICE_VERSION} (data in ${dataDir ?? ''})`);
    // A job wait gives up no sooner than the step's bound.
    const o = { client: conn.client, secrets, signal, publish: inputs.publish, prune: inputs.prune, onEvent: events.onEvent, jobTimeoutMs: timeoutMs };
    // Builders keep their index in the declaration: the engine and the result name them by it.
    const declaration = { ...loaded.declaration, builders };
    const { name, version } = declaration.stack;
    if (inputs.mode === 'plan') {
      const { plan } = await planDeclaration(declaration, o);
      events.close();
      for (const l of formatPlan(plan)) core.info(l);
      const result = planResult(publicTarget(inputs.url), plan, builders, secrets);
      setResultOutputs(result);
      await writeSummary(`Plan for ${name} ${version}`, plan, undefined);
      return;
    }
    const r = await applyDeclaration(declaration, o);
    const files = inputs.outputDir ? await saveImages(conn.client, r.images, inputs.outputDir, o) : [];
    events.close();
    const result = applyResult(publicTarget(inputs.url), r.plan, r.applianceUri, r.images, files, secrets);
    setResultOutputs(result);
    const entries = result.images;
    core.setOutput('image-uris', entries.map((e) => e.imageUri).join(','));
    core.setOutput('cloud-ids', entries.flatMap((e) => (e.cloudId ? [e.cloudId] : [])).join(','));
    core.setOutput('image-files', files.map((f) => f.path).join('\n'));
    for (const e of entries) core.info(`${e.format}: ${e.reused ? 'reused' : 'generated'} ${e.imageUri}${e.cloudId ? ` → ${e.cloudId}` : ''}`);
    await writeSummary(`Images of ${name} ${version}`, r.plan, entries);
  } catch (e) {
    events.close();
    const f = describeFailure(e, secrets, deadline);
    if (e instanceof DeclarationError) {
      annotate(f.problems);
    }
    core.setFailed(f.message);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await conn?.close().catch(() => undefined);
    try {
      giveBack(giveBackOnExit);
    } catch (e) {
      core.warning(`could not give the step's files back to the runner's user: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}

// Awaited, and a rejection of any kind (even a non-Error) fails the step.
run().catch((e: unknown) => core.setFailed(`unexpected failure: ${messageOf(e)}`));
