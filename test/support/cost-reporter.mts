// What a run of the suite cost, file by file, from vitest's own report (docs/testing.md "Cost"): the
// table of that page is this reporter's `.tmp/test-cost.md`, and the end of every run (a CI log's tail
// included) names the slowest files, so a change that makes one slower shows where it shows.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import type { Reporter, TestModule, Vitest } from 'vitest/node';

/** Where the table goes: `.tmp/` is ignored by git. */
export const COST_TABLE = '.tmp/test-cost.md';
const SHOWN = 15;

interface FileCost {
  readonly project: string;
  readonly file: string;
  /** Seconds: importing the file (collect) and running its tests and hooks. */
  readonly seconds: number;
  readonly tests: number;
}

const s = (n: number): string => n.toFixed(0);

export default class CostReporter implements Reporter {
  private started = Date.now();
  private root = process.cwd();
  private workers = 0;

  onInit(ctx: Vitest): void {
    this.started = Date.now();
    this.root = ctx.config.root;
    this.workers = ctx.config.maxWorkers;
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    if (modules.length === 0) return;
    const files: FileCost[] = modules.map((m) => {
      const d = m.diagnostic();
      return { project: m.project.name, file: relative(this.root, m.moduleId), seconds: (d.collectDuration + d.duration) / 1000, tests: [...m.children.allTests()].length };
    }).sort((a, b) => b.seconds - a.seconds);
    const total = files.reduce((n, f) => n + f.seconds, 0);
    const wall = (Date.now() - this.started) / 1000;
    const folders = new Map<string, number>();
    for (const f of files) {
      const key = `${f.project}: ${f.file.split('/').slice(0, 2).join('/')}`;
      folders.set(key, (folders.get(key) ?? 0) + f.seconds);
    }
    const lines = [
      `${files.length} files, ${files.reduce((n, f) => n + f.tests, 0)} tests: ${s(wall)} s of wall time, ${s(total)} s in the files (import and tests) on ${this.workers} workers.`,
      '',
      '| file | project | tests | seconds | share |',
      '|---|---|---|---|---|',
      ...files.slice(0, SHOWN).map((f) => `| ${f.file} | ${f.project} | ${f.tests} | ${s(f.seconds)} | ${((100 * f.seconds) / total).toFixed(1)} % |`),
      '',
      '| folder | seconds |',
      '|---|---|',
      ...[...folders].sort((a, b) => b[1] - a[1]).slice(0, SHOWN).map(([k, v]) => `| ${k} | ${s(v)} |`),
      '',
    ];
    mkdirSync(dirname(COST_TABLE), { recursive: true });
    writeFileSync(COST_TABLE, lines.join('\n'));
    const top = files.slice(0, 5).map((f) => `${f.file} (${f.project}) ${s(f.seconds)} s`).join('; ');
    process.stdout.write(`[cost] ${lines[0]} Slowest: ${top}. Table: ${COST_TABLE}\n`);
  }
}
