#!/usr/bin/env node
// Builds a release's package catalog for the reference server (data/debian-12-amd64.tsv.gz for Debian 12,
// data/debian-13-amd64.tsv.gz for 13: the release table in src/model/releases.ts) from its main amd64
// index: the suites <codename>, <codename>-updates and <codename>-security, one current version per package
// (the highest in dpkg's order), ids kept from a previous catalog.
//
//   node scripts/build-catalog.mjs [--release 12|13|<codename>] [--lists /var/lib/apt/lists | --mirror URL [--security-mirror URL] [--cache DIR]]
//                                  [--previous FILE] [--out data/<release's file>]
//
// --release (default 12) picks the release.
// --lists (the default) reads what `apt-get update` fetched; --mirror fetches InRelease (checked with gpgv
// against the Debian archive keyring) and Packages (checked against InRelease) into --cache
// (default debian-index in the OS layer cache: /var/cache/appliance-forge as root, ~/.cache/appliance-forge otherwise). --previous: the catalog whose ids are kept; without
// it ids are given in name order from 1. The format is described in src/server/catalog/data-file.ts.
// The code is the server's (src/server/catalog/refresh.ts), bundled with esbuild on each run.
import { build } from 'esbuild';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = parseArgs(process.argv.slice(2));

// Inside the package, so that the bundle resolves its dependencies (undici) from node_modules.
const bundle = join(root, 'node_modules', '.cache', 'build-catalog', `refresh-${process.pid}.cjs`);
mkdirSync(dirname(bundle), { recursive: true });
await build({
  entryPoints: [join(root, 'src/server/catalog/refresh.ts')],
  bundle: true, platform: 'node', format: 'cjs', target: 'node20', packages: 'external', outfile: bundle, logLevel: 'error',
});
const { rebuildCatalog, sharedIndexCacheDir, releaseNamed, dataFileOf } = createRequire(import.meta.url)(bundle);
const release = releaseNamed(args.release ?? '12');
if (!release) fail(`unknown release ${args.release}`);
const out = resolve(root, args.out ?? dataFileOf(release));
const src = args.mirror
  ? { mirror: args.mirror, securityMirror: args['security-mirror'], cacheDir: resolve(args.cache ?? sharedIndexCacheDir()) }
  : { lists: args.lists ?? '/var/lib/apt/lists' };
try {
  const r = await rebuildCatalog(src, args.previous && resolve(args.previous), out, release);
  console.log(`${r.file}: ${r.count} packages (${r.added} new ids, ${r.retired} retired), ${r.bytes} bytes, index date ${r.date}`);
} catch (e) {
  fail(e.message);
} finally {
  (await import('node:fs')).rmSync(bundle, { force: true });
}

function parseArgs(argv) {
  const o = {};
  for (let i = 0; i < argv.length; i++) {
    const m = /^--(release|lists|mirror|security-mirror|cache|previous|out)$/.exec(argv[i]);
    if (!m || i + 1 >= argv.length) {
      fail(`usage: build-catalog.mjs [--release 12|13] [--lists DIR | --mirror URL [--security-mirror URL] [--cache DIR]] [--previous FILE] [--out FILE] (bad argument ${argv[i]})`);
    }
    o[m[1]] = argv[++i];
  }
  if (o.lists && o.mirror) fail('give --lists or --mirror, not both');
  return o;
}

function fail(msg) {
  console.error(`build-catalog: ${msg}`);
  process.exit(1);
}
