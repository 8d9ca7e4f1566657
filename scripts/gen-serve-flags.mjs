// Writes the table of serve's numeric flags (src/cli/serve-flags.ts: flag, environment variable, default,
// range, unit, what it limits) into docs/server.md, between its serve-flags markers. Runs after `tsc`
// (it loads dist/). `--check` writes nothing and fails when the block differs from what the table makes now.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { serveFlagsMarkdown } = createRequire(import.meta.url)(path.join(root, 'dist/src/cli/serve-flags.js'));
const file = path.join(root, 'docs/server.md');
const BEGIN = '<!-- BEGIN GENERATED: serve-flags -->\n';
const END = '<!-- END GENERATED: serve-flags -->';

const text = readFileSync(file, 'utf8');
const start = text.indexOf(BEGIN);
const end = text.indexOf(END);
if (start < 0 || end < start) {
  console.error(`docs/server.md has no block between ${BEGIN.trim()} and ${END}`);
  process.exit(1);
}
const next = text.slice(0, start + BEGIN.length) + serveFlagsMarkdown() + text.slice(end);
if (process.argv.includes('--check')) {
  if (next !== text) {
    console.error('docs/server.md: the serve flags block differs from src/cli/serve-flags.ts: run npx tsc -p tsconfig.json && node scripts/gen-serve-flags.mjs');
    process.exit(1);
  }
} else if (next !== text) {
  writeFileSync(file, next);
}
