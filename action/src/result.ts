// The `result` output: the document `appliance-forge plan|apply --json` prints (engine/run-document.ts),
// one entry per builder the step ran, keyed by the builder's index in the declaration so that the results
// of a matrix's jobs merge by concatenating their `images` (docs/action-guide.md "Matrix fan-out").
import type { ValidationReport } from '../../src/engine';
import type { RunDocument, RunImage } from '../../src/engine/run-document';

export { applyDocument as applyResult, planDocument as planResult } from '../../src/engine/run-document';
export type ActionResult = RunDocument;
export type ResultEntry = RunImage;

/** `mode: validate`: the report of `appliance-forge validate --json`, with the mode. */
export type ValidateResult = { mode: 'validate' } & ValidationReport;
