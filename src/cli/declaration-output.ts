// What plan, apply and destroy print when they succeed: the JSON document's parts and the text lines.
import {
  type ApplyResult, type DestroyPlan, type Plan, removalChanges, type Removed, type SavedImage, type SecretSet,
} from '../engine';


export function formatFiles(files: readonly SavedImage[] | undefined): string[] {
  return (files ?? []).flatMap((f) => [
    `  ${f.format.padEnd(18)} ${f.kept ? 'kept     ' : 'saved    '} ${f.path} (sha256 checked)`,
    ...Object.values(f.sboms).map((p) => `  ${''.padEnd(18)} sbom      ${p}`),
  ]);
}

export function formatResult(r: ApplyResult & { plan: Plan }): string[] {
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

/** destroy's document (`--json`): the counts and one change per object removed or kept. */
export function destroyJson(target: string, plan: DestroyPlan, secrets: SecretSet) {
  return {
    ok: true, mode: 'destroy', target,
    summary: { changes: plan.hasChanges, remove: plan.removals.length, keep: plan.kept.length },
    changes: removalChanges(plan.removals, plan.kept, secrets),
  };
}

/** destroy's closing line, terraform's: what would go (`--dry-run`), nothing to remove, or what went. */
export function destroyClosing(plan: DestroyPlan, what: string, removed: readonly Removed[] | undefined): string {
  if (!removed) return plan.hasChanges ? `\nPlan: 0 to create, 0 to update, ${plan.removals.length} to delete.` : `No changes. Nothing of ${what} to remove.`;
  const gone = removed.filter((r) => r.outcome === 'gone').length;
  return `\nDestroy complete! Resources: ${removed.length - gone} destroyed${gone ? ` (${gone} were already gone)` : ''}.`;
}
