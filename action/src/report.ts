// What a step shows: the engine's events as log groups, problems as annotations, the outputs and the job
// summary of a plan or an apply.
import * as core from '@actions/core';
import { type EngineEvent, formatPlan, formatProblems, listProblems, type Plan, type Problem } from '../../src/engine';
import type { Failure } from '../../src/engine/failure';
import type { ActionResult, ResultEntry } from './result';

/** Phases become log groups; progress is logged at each quarter so that logs stay short. */
export function logEvents(): { onEvent: (e: EngineEvent) => void; close: () => void } {
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

export async function writeSummary(title: string, plan: Plan, entries: readonly ResultEntry[] | undefined): Promise<void> {
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
        ...pubs.map((e) => [e.displayName ?? '', e.format, e.cloudId ?? '', e.publicationReused ? 'yes' : 'no']),
      ]);
    }
  } else {
    s.addCodeBlock(formatPlan(plan).join('\n'));
  }
  await s.write();
}

/** A failed step's summary: what failed, the message and the declaration's problems at their lines. */
export async function writeFailureSummary(what: string, f: Failure): Promise<void> {
  if (!process.env.GITHUB_STEP_SUMMARY) return;
  const s = core.summary.addHeading(`${what}: failed`, 3).addCodeBlock(f.message);
  if (f.problems.length) s.addCodeBlock(formatProblems(f.problems).join('\n'));
  await s.write();
}

/** Problems as annotations at their lines (the first of them: problems.ts); GitHub shows 10 per kind and step. */
export function annotate(problems: readonly Problem[]): void {
  for (const p of listProblems(problems).problems) {
    const props = { file: p.file, startLine: p.line, startColumn: p.column };
    if (p.severity === 'error') core.error(p.message, props);
    else core.warning(p.message, props);
  }
}

/** The outputs both modes write: `result` (result.ts), `target`, `changes`, `appliance-uri` when known. */
export function setResultOutputs(result: ActionResult): void {
  core.setOutput('result', JSON.stringify(result));
  core.setOutput('target', result.target);
  core.setOutput('changes', String(result.summary.changes));
  if (result.applianceUri) core.setOutput('appliance-uri', result.applianceUri);
}
