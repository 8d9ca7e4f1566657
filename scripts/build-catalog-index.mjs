// Writes the shipped catalogs' start indexes into dist/catalog-index/ (`npm run build` and `prepare` run
// it after tsc), so that no data folder's first start writes them (src/server/catalog/start-index.ts,
// builtIndexDir). An index already there for the data file's digest is kept.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { builtIndexDir, writeBuiltIndexes } = require(path.join(root, 'dist/src/server/catalog/start-index.js'));
for (const file of writeBuiltIndexes(builtIndexDir())) console.log(`catalog index: ${path.relative(root, file)}`);
