// Which of the declaration's builders a run builds: `--only` / `--except` on the command line (as
// Packer's -only / -except) and the Action's `builders` input (a workflow matrix gives each builder
// its own job and runner). A selector is a builder type as written in the file (case-insensitive:
// every builder of that type) or an index (0-based, as in `builders[0]`).

import type { BuilderDecl } from './declaration';
import { UsageError } from './errors';

/** A selector that names no builder of the declaration; the message lists the builders there are. */
export class BuilderSelectionError extends UsageError {
  static override readonly code = 'E_BUILDER_SELECTION';
  constructor(message: string) {
    super(message);
    this.name = 'BuilderSelectionError';
  }
}

/** Selectors separated by commas or new lines, blanks dropped. */
export function selectorList(text: string): string[] {
  return text.split(/[,\n]/).map((s) => s.trim()).filter(Boolean);
}

/**
 * The builders the selectors name (or, with `except`, the others), in declaration order whatever the
 * order of the selectors; every builder when there is no selector. `label` names the source in messages.
 */
export function selectBuilders(builders: readonly BuilderDecl[], selectors: readonly string[], o: { label: string; except?: boolean }): BuilderDecl[] {
  if (!selectors.length) return [...builders];
  const list = builders.map((b) => `${b.index} ${b.type}`).join(', ') || 'none';
  const chosen = new Set<number>();
  for (const sel of selectors) {
    const found = /^\d+$/.test(sel)
      ? builders.filter((b) => b.index === Number(sel))
      : builders.filter((b) => b.type.toLowerCase() === sel.toLowerCase());
    if (!found.length) throw new BuilderSelectionError(`${o.label}: no builder is ${JSON.stringify(sel)} (the declaration's builders, by index and type: ${list})`);
    for (const b of found) chosen.add(b.index);
  }
  return builders.filter((b) => chosen.has(b.index) !== (o.except === true));
}
