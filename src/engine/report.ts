// A plan in words, for the command line, the Action's log and its job summary.
import { planChanges } from './changes';
import type { Plan } from './plan';
import type { Removal } from './remove';

const SIGN = { create: '+', update: '~', unchanged: '=', delete: '-', generate: '+', publish: '+', reuse: '=' } as const;

export function formatPlan(plan: Plan): string[] {
  const a = plan.appliance;
  const lines = [
    `${SIGN[a.action]} appliance ${a.name} ${a.version}: ${a.action}${a.changes.length ? ` (${a.changes.join(', ')})` : ''}`,
    `${SIGN[plan.osProfile.action]} OS profile ${plan.osProfile.name}: ${plan.osProfile.action}`,
  ];
  const p = plan.packages;
  lines.push(
    `${SIGN[p.action]} packages: ${p.action === 'unchanged' ? 'unchanged' : [
      p.add.length ? `add ${p.add.map((x) => x.label).join(', ')}` : '',
      p.remove.length ? `remove ${p.remove.map((x) => x.label).join(', ')}` : '',
    ].filter(Boolean).join('; ')}`,
  );
  for (const s of plan.software) {
    lines.push(`${SIGN[s.action]} software ${s.bundle.name} ${s.bundle.version}: ${s.action}`);
    for (const f of s.files) if (f.action !== 'unchanged') lines.push(`    ${SIGN[f.action]} file ${f.name}: ${f.action}${f.action === 'update' && f.metadataOnly ? ' (metadata)' : ''}`);
  }
  for (const i of plan.images) {
    lines.push(`${SIGN[i.action]} image ${i.format}: ${i.action}${i.action === 'reuse' && i.pending ? ' (in progress)' : ''} — ${i.reason}`);
  }
  for (const pub of plan.publications) {
    lines.push(`${SIGN[pub.action]} publication ${pub.displayName}: ${pub.action}${pub.action === 'reuse' && pub.publication.cloudId ? ` (${pub.publication.cloudId})` : ''} — ${pub.reason}`);
  }
  return [...lines, ...formatRemovals(plan.removals)];
}

/** Removals (`- image QCOW2: delete — why`) and, for destroy, what stays (`= … : kept — why`). */
export function formatRemovals(removals: readonly Removal[], kept: readonly Removal[] = []): string[] {
  return [
    ...removals.map((r) => `${SIGN.delete} ${r.kind} ${r.name}: delete (${r.uri}) — ${r.reason}`),
    ...kept.map((k) => `${SIGN.unchanged} ${k.kind} ${k.name}: kept (${k.uri}) — ${k.reason}`),
  ];
}

export interface PlanSummary {
  readonly changes: boolean;
  readonly generate: number;
  readonly reuseImages: number;
  readonly publish: number;
  readonly reusePublications: number;
  readonly uploads: number;
  /** Objects removed after the apply (`--prune`): superseded images and their publications. */
  readonly remove: number;
}

export function planSummary(plan: Plan): PlanSummary {
  return {
    changes: plan.hasChanges,
    generate: plan.images.filter((i) => i.action === 'generate').length,
    reuseImages: plan.images.filter((i) => i.action === 'reuse').length,
    publish: plan.publications.filter((p) => p.action === 'publish').length,
    reusePublications: plan.publications.filter((p) => p.action === 'reuse').length,
    uploads: plan.software.flatMap((s) => s.files).filter((f) => f.action === 'create' || (f.action === 'update' && !f.metadataOnly)).length,
    remove: plan.removals.length,
  };
}

/**
 * The closing line of a plan or an apply, in terraform's manner (`Plan: 1 to add, 0 to change, 0 to
 * destroy.`) with the plan's own verbs: `create` counts what is created, generated or published,
 * `update` and `delete` what is updated and deleted (engine/changes.ts); no-ops are not counted.
 */
export function closingLine(mode: 'plan' | 'apply', plan: Plan): string {
  const n = { create: 0, update: 0, delete: 0 };
  for (const c of planChanges(plan)) {
    if (c.action === 'create' || c.action === 'generate' || c.action === 'publish') n.create++;
    else if (c.action === 'update' || c.action === 'delete') n[c.action]++;
  }
  if (mode === 'apply') return `Apply complete! Resources: ${n.create} created, ${n.update} updated, ${n.delete} deleted.`;
  return plan.hasChanges
    ? `Plan: ${n.create} to create, ${n.update} to update, ${n.delete} to delete.`
    : 'No changes. The service matches the declaration.';
}
