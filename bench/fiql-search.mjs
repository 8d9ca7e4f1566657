#!/usr/bin/env node
// Package search throughput: the catalog's FIQL search (parse + compile + scan + page + Pkg records)
// against a baseline measured in the same run, a hand-written Array.filter predicate over the same rows.
// Runs against the build (it finds every release's data file from there):
//
//   npx tsc -p tsconfig.json && node bench/fiql-search.mjs [--seconds 1]
import { createRequire } from 'node:module';

const secIdx = process.argv.indexOf('--seconds');
const seconds = secIdx > 0 ? Number(process.argv[secIdx + 1]) : 1;
if (!(seconds > 0 && seconds <= 60)) throw new Error('--seconds must be in (0, 60]');

const require = createRequire(import.meta.url);
run({ ...require('../dist/src/server/catalog/index.js'), ...require('../dist/src/server/catalog/data-file.js') });

function run({ loadCatalog, readCatalogData, defaultDataFile }) {
  let t = performance.now();
  const catalog = loadCatalog();
  const loadMs = performance.now() - t;
  const rows = readCatalogData(defaultDataFile()).packages;
  console.log(`catalog: ${rows.length} packages, first load ${loadMs.toFixed(0)} ms (${process.version})`);

  const cases = [
    {
      label: "name=='*nginx*' count 50 orderBy name",
      opts: { query: "name=='*nginx*'", count: 50, orderBy: 'name' },
      base: () => page(rows.filter((r) => r.name.includes('nginx')), 0, 50),
    },
    {
      label: "name=='lib*';arch==amd64 count 50 orderBy name",
      opts: { query: "name=='lib*';arch==amd64", count: 50, orderBy: 'name' },
      base: () => page(rows.filter((r) => r.name.startsWith('lib') && r.arch === 'amd64'), 0, 50),
    },
    {
      label: "name=='lib*';arch==amd64 count 50 offset 5000 orderBy name descending",
      opts: { query: "name=='lib*';arch==amd64", count: 50, offset: 5000, orderBy: 'name', descending: true },
      base: () => page(rows.filter((r) => r.name.startsWith('lib') && r.arch === 'amd64').reverse(), 5000, 50),
    },
    {
      label: 'size=gt=1000000 count 20 orderBy size descending (sorts)',
      opts: { query: 'size=gt=1000000', count: 20, orderBy: 'size', descending: true },
      base: () => page(rows.filter((r) => r.size > 1000000).sort((a, b) => b.size - a.size), 0, 20),
    },
  ];

  for (const c of cases) {
    const fiql = catalog.searchPackages(1, c.opts);
    const base = c.base();
    // Same answer, or the comparison means nothing.
    if (fiql.total !== base.total || fiql.items.map((p) => p.dbId).join() !== base.items.map((r) => r.id).join()) {
      throw new Error(`${c.label}: FIQL search and baseline disagree`);
    }
    const [f, b] = rates(() => catalog.searchPackages(1, c.opts), c.base);
    console.log(
      `${c.label}\n  total ${fiql.total}: fiql ${f.perSec.toFixed(0)} searches/s (${f.msEach.toFixed(2)} ms), ` +
        `baseline Array.filter ${b.perSec.toFixed(0)}/s (${b.msEach.toFixed(2)} ms), fiql/baseline ${(f.perSec / b.perSec).toFixed(2)}`,
    );
  }
}

function page(list, offset, count) {
  return { total: list.length, items: list.slice(offset, offset + count) };
}

/**
 * Runs both functions for `seconds` each after a warm-up, alternating in 50 ms slices so that load from
 * other processes weighs on both alike; bounded by time, not by a count.
 */
function rates(...fns) {
  const stats = fns.map(() => ({ n: 0, ms: 0 }));
  const warm = performance.now() + 300;
  while (performance.now() < warm) for (const fn of fns) fn();
  const slices = Math.ceil((seconds * 1000) / 50);
  for (let s = 0; s < slices; s++) {
    fns.forEach((fn, i) => {
      const t0 = performance.now();
      const end = t0 + 50;
      let now = t0;
      while (now < end) {
        fn();
        stats[i].n++;
        now = performance.now();
      }
      stats[i].ms += now - t0;
    });
  }
  return stats.map(({ n, ms }) => ({ perSec: (n * 1000) / ms, msEach: ms / n }));
}
