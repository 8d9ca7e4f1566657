// The `builders` input: which of the declaration's builders this step runs, so that a workflow
// matrix can give each builder its own job (and runner). Selectors are builder types (as written in
// the file, case-insensitive: every builder of that type) or indexes (0-based, as in `builders[0]`),
// separated by commas or new lines. Empty: every builder.
import type { BuilderDecl } from '../../src/engine';

export class BuilderSelectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BuilderSelectionError';
  }
}

export function selectBuilders(builders: readonly BuilderDecl[], input: string): BuilderDecl[] {
  const selectors = input.split(/[,\n]/).map((s) => s.trim()).filter(Boolean);
  if (!selectors.length) return [...builders];
  const list = builders.map((b) => `${b.index} ${b.type}`).join(', ') || 'none';
  const chosen = new Set<number>();
  for (const sel of selectors) {
    const found = /^\d+$/.test(sel)
      ? builders.filter((b) => b.index === Number(sel))
      : builders.filter((b) => b.type.toLowerCase() === sel.toLowerCase());
    if (!found.length) throw new BuilderSelectionError(`input builders: no builder is ${JSON.stringify(sel)} (the declaration's builders, by index and type: ${list})`);
    for (const b of found) chosen.add(b.index);
  }
  // Declaration order, whatever the order of the selectors.
  return builders.filter((b) => chosen.has(b.index));
}
