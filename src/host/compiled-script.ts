// Child scripts (a build's namespace stage, the start index writer) ship compiled beside the module that
// starts them: in dist/ and in each one-file build. A module running from its TypeScript source (the
// tests) finds the compiled one under dist/, which `npm test` builds first.
import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/** `name` beside the calling module, given as its `__filename` and `__dirname`. */
export function compiledScript(name: string, moduleFile: string, moduleDir: string): string {
  if (!moduleFile.endsWith('.ts')) return join(moduleDir, name);
  let root = moduleDir;
  while (!existsSync(join(root, 'package.json')) && dirname(root) !== root) root = dirname(root);
  return join(root, 'dist', relative(root, moduleDir), name);
}
