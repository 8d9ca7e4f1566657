// The image library (src/imaging, with its boot check), the Debian archive reader (src/debian), the
// publication library (src/openstack) and the host layer (src/host) import nothing of the server, the engine or
// the command line: read from the import statements of every file, type-only imports included (madge
// skips those), so a moved default or path cannot come back as an import running up.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(__dirname, '../..');
const LIBRARIES = ['src/imaging', 'src/debian', 'src/openstack', 'src/host'];
const ABOVE = ['src/server', 'src/engine', 'src/cli'];

/** Every module specifier of a TypeScript text: import/export … from, side-effect imports, import(), require(). */
function specifiers(text: string): string[] {
  const found: string[] = [];
  const patterns = [/\b(?:import|export)\s+(?:type\s+)?[^'";]*?\sfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*['"]([^'"]+)['"]/g, /\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/g];
  for (const re of patterns) for (const m of text.matchAll(re)) found.push(m[1]!);
  return found;
}

function filesUnder(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)));
}

/** The imports of `file` that land in a layer above the libraries, as `file → target`. */
function upward(file: string, text: string): string[] {
  return specifiers(text)
    .filter((s) => s.startsWith('.'))
    .map((s) => path.relative(root, path.resolve(root, path.dirname(file), s)))
    .filter((target) => ABOVE.some((a) => target === a || target.startsWith(`${a}/`)))
    .map((target) => `${file} → ${target}`);
}

describe('the image, publication and host libraries', () => {
  it('the reader sees every form of import, type-only included, and catches one running up', () => {
    const text = [
      "import type { Ctx } from '../server/context';",
      "import { x,\n  y } from '../engine/plan';",
      "export { z } from '../../cli/options';",
      "import '../server/side-effect';",
      "const m = require('../server/late');",
      "import { ok } from './build';",
    ].join('\n');
    expect(upward('src/imaging/fake.ts', text)).toEqual([
      'src/imaging/fake.ts → src/server/context',
      'src/imaging/fake.ts → src/engine/plan',
      'src/imaging/fake.ts → src/server/side-effect',
      'src/imaging/fake.ts → src/server/late',
    ]);
    expect(upward('src/imaging/os/fake.ts', "export { z } from '../../cli/options';")).toEqual(['src/imaging/os/fake.ts → src/cli/options']);
  });

  it('import nothing of src/server, src/engine or src/cli', () => {
    const files = LIBRARIES.flatMap(filesUnder);
    expect(files.length).toBeGreaterThan(60);
    const imports = files.flatMap((f) => specifiers(readFileSync(path.join(root, f), 'utf8')));
    expect(imports.length).toBeGreaterThan(200);
    expect(files.flatMap((f) => upward(f, readFileSync(path.join(root, f), 'utf8')))).toEqual([]);
  });
});
