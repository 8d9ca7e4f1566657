#!/usr/bin/env node
// `appliance-forge`'s entry: it imports nothing of the command line, so that Node's compile cache is on
// before any of it is compiled, then runs the command line (cli.ts) from its one-file build
// dist/cli/appliance-forge.js (scripts/build-cli.mjs: one file read and compiled instead of ~450 modules
// resolved one by one), else from this module tree. An installed package (under node_modules, where npm
// gives its files the time they were unpacked) runs the build whenever it has one; a checkout runs it
// unless this module is newer (a `tsc` since the last build). Its first statement checks the Node version
// (node-floor.ts), before any other require: this file stays in syntax an old Node parses too.
import { exitIfNodeTooOld } from '../node-floor';

exitIfNodeTooOld();

import { statSync } from 'node:fs';
import nodeModule from 'node:module';
import path from 'node:path';

type Cli = typeof import('./cli');

/** The one-file build, relative to dist/src/cli/ where this module is compiled. */
export const CLI_BUNDLE = path.join(__dirname, '..', '..', 'cli', 'appliance-forge.js');

function modified(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return -1;
  }
}

/** The command line to run: the one-file build (when it is not older than this module, in a checkout), else the tree. */
export function loadCli(): Cli {
  // Node ≥ 22.1 keeps the compiled code (NODE_COMPILE_CACHE or NODE_DISABLE_COMPILE_CACHE as Node documents them).
  const enableCompileCache = (nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache;
  if (enableCompileCache) enableCompileCache();
  const load = nodeModule.createRequire(__filename);
  const built = modified(CLI_BUNDLE);
  const installed = __dirname.split(path.sep).includes('node_modules');
  const bundled = built >= 0 && (installed || built >= modified(__filename));
  return load(bundled ? CLI_BUNDLE : './cli') as Cli;
}

if (require.main === module) loadCli().run(process.argv.slice(2));
