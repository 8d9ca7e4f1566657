// Writes the JSON Schema of the declaration format (src/engine/declaration-schema.ts, made from the
// description the parser reads through) to schema/declaration.schema.json, the file the package ships
// for editors. Runs after `tsc` (it loads dist/). `--check` writes nothing and fails when the
// committed file differs from what the description makes now.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { DECLARATION_SCHEMA_FILE, declarationSchemaText } = createRequire(import.meta.url)(path.join(root, 'dist/src/engine/declaration-schema.js'));
const file = path.join(root, DECLARATION_SCHEMA_FILE);
const text = declarationSchemaText();
if (process.argv.includes('--check')) {
  let committed = '';
  try {
    committed = readFileSync(file, 'utf8');
  } catch {
    // missing: differs
  }
  if (committed !== text) {
    console.error(`${DECLARATION_SCHEMA_FILE} differs from the declaration format: run npm run build`);
    process.exit(1);
  }
} else {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}
