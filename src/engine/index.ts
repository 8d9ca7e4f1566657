// The declaration engine: parse → resolve → plan → apply (style example 11). The command line and
// the GitHub Action are thin adapters over these three calls.
import type { Client } from '../client';
import { applyPlan, type ApplyOptions, type ApplyResult } from './apply';
import type { Declaration } from './declaration';
import type { EngineEvent, EventSink } from './events';
import { hashBundleFiles, observe } from './observe';
import { parseDeclarationFile, type ParseOptions } from './parse';
import { computePlan, type Plan, preparePasswords } from './plan';
import { observeDestroy, type DestroyPlan } from './destroy';
import { removeAll, type Removed } from './remove';
import { DeclarationError, type Problem } from './problems';
import { resolveDeclaration } from './resolve';
import { SecretSet } from './secrets';

export type { ApplyResult, ImageResult } from './apply';
export { ApplyError, UsageError } from './errors';
export { saveImages, type SavedImage, type SaveImagesOptions } from './output';
export type { Declaration, BuilderDecl, BundleDecl, PackageDecl } from './declaration';
export type { EngineEvent, EventSink, Phase } from './events';
export { parseDeclaration, parseDeclarationFile, type ParseOptions } from './parse';
export { ALLOW_OUTSIDE_SOURCES } from './bundle-source';
export { collectVars, VarsError } from './vars';
export { BuilderSelectionError, selectBuilders, selectorList } from './builder-selection';
export { validateDeclarationFile, type ValidationReport } from './validate';
export { closingLine, formatPlan, formatRemovals, planSummary } from './report';
export { isNoOp, planChanges, removalChanges, type ChangeAction as PlanChangeAction, type ChangeKind, type PlanChange } from './changes';
export { computeDestroy, type DestroyPlan } from './destroy';
export { removeObject, type RemovableKind, type Removal, type Removed } from './remove';
export { INVENTORY_KINDS, inventoryUri, inventoryUriText, type InventoryItem, listInventory, showRecord } from './inventory';
export type { AppliancePlan, ImagePlan, Plan, PublicationPlan, SoftwarePlan } from './plan';
export { DeclarationError, formatProblem, formatProblems, listProblems, PROBLEMS_LISTED, type Problem, type Position } from './problems';
export { MASK, SecretSet } from './secrets';

export interface Loaded {
  readonly declaration: Declaration;
  /** Warnings (fields the service does not use); errors throw. */
  readonly problems: readonly Problem[];
}

/**
 * Reads and validates a declaration file; throws DeclarationError with every problem. The checks are
 * `validate`'s (the model's closed lists, time zones, install profile rules), before any request: what only
 * the service knows (formats, distributions, packages) is asked by the plan (resolve.ts), before any write.
 */
export function loadDeclaration(file: string, options: Pick<ParseOptions, 'env' | 'vars' | 'allowOutsideSources' | 'publish'> = {}): Loaded {
  const r = parseDeclarationFile(file, { ...options, vocabularies: 'model' });
  if (!r.declaration) throw new DeclarationError(r.problems);
  return { declaration: r.declaration, problems: r.problems };
}

export interface EngineOptions extends ApplyOptions {
  readonly client: Client;
  /** Every message leaving the engine is masked with these (the declaration's secrets are added). */
  readonly secrets?: SecretSet;
  /** Plan and apply publications; default true (the Action's `publish` input). */
  readonly publish?: boolean;
  /** Plan and carry out the removal of superseded images and their publications; default false. */
  readonly prune?: boolean;
}

export interface PlanResult {
  readonly plan: Plan;
  readonly declaration: Declaration;
}

function masked(o: EngineOptions, decl: Declaration): { secrets: SecretSet; emit: EventSink } {
  const secrets = o.secrets ?? new SecretSet();
  secrets.addAll(decl.secrets);
  const sink = o.onEvent;
  const emit: EventSink = (e) => sink?.(maskEvent(e, secrets));
  return { secrets, emit };
}

function maskEvent(e: EngineEvent, s: SecretSet): EngineEvent {
  switch (e.type) {
    case 'phase': return { ...e, title: s.mask(e.title) };
    case 'step': return { ...e, message: s.mask(e.message) };
    case 'progress': return { ...e, label: s.mask(e.label), message: e.message && s.mask(e.message) };
    case 'done': return { ...e, label: s.mask(e.label), message: e.message && s.mask(e.message) };
  }
}

async function prepare(decl: Declaration, o: EngineOptions, emit: EventSink) {
  emit({ type: 'phase', phase: 'resolve', title: 'Resolve and plan' });
  const [resolved, observed, files] = await Promise.all([
    resolveDeclaration(o.client, decl, o.signal),
    observe(o.client, decl, o.signal),
    hashBundleFiles(decl),
    preparePasswords(decl.stack),
  ]);
  const plan = computePlan(decl, resolved, observed, files, { publish: o.publish, prune: o.prune });
  return { resolved, files, plan };
}

/** What an apply would do. Reads only (GET requests). */
export async function planDeclaration(decl: Declaration, o: EngineOptions): Promise<PlanResult> {
  const { emit } = masked(o, decl);
  const { plan } = await prepare(decl, o, emit);
  return { plan, declaration: decl };
}

/** Brings the service to the declaration; a second run of an unchanged file changes nothing. */
export async function applyDeclaration(decl: Declaration, o: EngineOptions): Promise<ApplyResult & { plan: Plan }> {
  const { emit } = masked(o, decl);
  const { resolved, files, plan } = await prepare(decl, o, emit);
  const result = await applyPlan(o.client, decl, resolved, files, plan, { ...o, onEvent: emit });
  return { ...result, plan };
}

/** What `destroy` would remove for the declaration, and what it leaves (with why). Reads only. */
export async function planDestroy(decl: Declaration, o: EngineOptions): Promise<DestroyPlan> {
  const { emit } = masked(o, decl);
  emit({ type: 'phase', phase: 'resolve', title: 'Find what the declaration made' });
  return observeDestroy(o.client, decl, o.signal);
}

/** Removes what `planDestroy` planned, in order (an object already gone is `gone`). */
export async function destroyPlanned(decl: Declaration, plan: DestroyPlan, o: EngineOptions): Promise<Removed[]> {
  const { emit } = masked(o, decl);
  emit({ type: 'phase', phase: 'remove', title: `Remove ${decl.stack.name} ${decl.stack.version}` });
  return removeAll(o.client, plan.removals, { signal: o.signal, emit });
}
