// The GitHub Action: the step's side of the engine's run session (engine/session.ts). Masks every secret
// before anything else is logged, groups the log by phase, turns declaration problems into annotations,
// writes outputs and a job summary, and fails the step on any error (main is awaited and every
// rejection, Error or not, ends in setFailed).
import path from 'node:path';
import * as core from '@actions/core';
import { formatPlan, formatProblems, SecretSet, selectorList, validateDeclarationFile } from '../../src/engine';
import { EMBEDDED, publicTarget } from '../../src/engine/connect';
import { describeFailure, type Failure } from '../../src/engine/failure';
import { runDeclaration } from '../../src/engine/session';
import { messageOf } from '../../src/errors';
import { SERVICE_VERSION } from '../../src/server/version';
import { embeddedDataDir } from './data-dir';
import { giveBack, installImageTools, rerunAsRoot, takeBack } from './host';
import { type Inputs, readInputs } from './inputs';
import { annotate, logEvents, setResultOutputs, writeFailureSummary, writeSummary } from './report';
import { applyResult, planResult, type ValidateResult } from './result';
import { subjectLines, writeSubjectChecksums } from './subjects';

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

export async function run(): Promise<void> {
  const secrets = new SecretSet();
  const events = logEvents();
  let giveBackOnExit: string[] = [];
  const ac = new AbortController();
  // A cancelled workflow sends SIGINT, then SIGTERM: cancel the running jobs on the service.
  const onSignal = () => ac.abort();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let what = 'appliance-forge';
  const fail = async (f: Failure) => {
    events.close();
    annotate(f.problems);
    core.setFailed(f.message);
    // The job summary says it too: a failed step's page is not left empty.
    await writeFailureSummary(what, f);
  };
  try {
    const inputs = readInputs(secrets);
    what = `${inputs.mode} of ${inputs.file}`;
    if (inputs.mode === 'validate') return await validateStep(inputs);
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
    if (inputs.layerArchiveDir && embedded) {
      // The builder reads it (imaging/cache-dir.ts); the runner's user gets it back for actions/cache to save.
      process.env.APPLIANCE_FORGE_LAYER_ARCHIVE_DIR = path.resolve(inputs.layerArchiveDir);
      giveBackOnExit.push(path.resolve(inputs.layerArchiveDir));
    } else if (inputs.layerArchiveDir) {
      core.warning(`layer-archive-dir is for url: ${EMBEDDED}: a service keeps its own OS layers`);
    }
    const { url, user, apiKey, secretKey, password } = inputs;
    const r = await runDeclaration({
      mode: inputs.mode, file: inputs.file, secrets, signal: ac.signal, prune: inputs.prune, outputDir: inputs.outputDir || undefined,
      load: { allowOutsideSources: inputs.allowOutsideSources, vars: inputs.vars, publish: inputs.publish },
      builders: { selectors: selectorList(inputs.builders), label: 'input builders' },
      connection: {
        url, user, apiKey, secretKey, password, dataDir,
        sources: { url: 'input url', user: 'input user', apiKey: 'input api-key', secretKey: 'input secret-key', password: 'input password' },
      },
      timeout: { ms: inputs.timeoutMinutes * 60_000, bound: `${inputs.timeoutMinutes} min (timeout-minutes)` },
    }, {
      onEvent: events.onEvent,
      onSecret: (s) => core.setSecret(s),
      loaded: (l) => {
        annotate(l.problems);
        if (embedded && (user || apiKey || secretKey || password)) {
          core.warning(`url is ${EMBEDDED}: the user and credential inputs are not used (the embedded server has its own local user)`);
        }
      },
      selected: (builders, all) => {
        if (builders.length < all.length) core.info(`builders: ${builders.map((b) => `${b.index} ${b.type}`).join(', ')}`);
      },
      connected: (conn) => {
        if (conn.target === 'embedded') core.info(`url ${EMBEDDED}: using the embedded reference server ${SERVICE_VERSION} (data in ${dataDir ?? ''})`);
      },
    });
    if (!r.ok) return await fail(r.failure);
    events.close();
    const { name, version } = r.declaration.stack;
    if (r.mode === 'plan') {
      for (const l of formatPlan(r.plan)) core.info(l);
      setResultOutputs(planResult(publicTarget(url), r.plan, r.declaration.builders, secrets));
      await writeSummary(`Plan for ${name} ${version}`, r.plan, undefined);
    } else if (r.mode === 'apply') {
      const { result: applied, files = [] } = r;
      const result = applyResult(publicTarget(url), applied.plan, applied.applianceUri, applied.images, files, secrets);
      setResultOutputs(result);
      const entries = result.images;
      core.setOutput('image-uris', entries.map((e) => e.imageUri).join(','));
      core.setOutput('cloud-ids', entries.flatMap((e) => (e.cloudId ? [e.cloudId] : [])).join(','));
      core.setOutput('image-files', files.map((f) => f.path).join('\n'));
      core.setOutput('sbom-files', files.flatMap((f) => Object.values(f.sboms)).join('\n'));
      const subjects = subjectLines(applied.images, files);
      if (subjects.length > 0) {
        const written = writeSubjectChecksums(subjects);
        giveBackOnExit.push(written.dir); // read by actions/attest-build-provenance, as the runner's user
        core.setOutput('subject-checksums', written.file);
      }
      for (const e of entries) core.info(`${e.format}: ${e.reused ? 'reused' : 'generated'} ${e.imageUri}${e.cloudId ? ` → ${e.cloudId}` : ''}`);
      await writeSummary(`Images of ${name} ${version}`, applied.plan, entries);
    }
  } catch (e) {
    await fail(describeFailure(e, secrets));
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    try {
      giveBack(giveBackOnExit);
    } catch (e) {
      core.warning(`could not give the step's files back to the runner's user: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}

// Awaited, and a rejection of any kind (even a non-Error) fails the step.
run().catch((e: unknown) => core.setFailed(`unexpected failure: ${messageOf(e)}`));
