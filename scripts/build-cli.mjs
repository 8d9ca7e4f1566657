// Bundles the command line into dist/cli/ (`npm run build` and `prepare` run it after tsc):
//   appliance-forge.js   src/cli/cli.ts with the client, engine, embedded server, the package's own
//                        dependencies and Fastify in one file, which dist/src/cli/main.js loads instead
//                        of ~590 modules (src/cli/main.ts says when); its licence comments beside it;
//   in-namespace-main.js an ordinary user's disk stage, found beside the bundle (src/imaging/disk/in-namespace.ts);
//   catalog-index-main.js the start index writer of a first start, found beside the bundle
//                        (src/server/catalog/start-index.ts).
// The optional peer dependency better-sqlite3 (a native addon) stays external; fastify is bundled but must
// be installed, as before (below). Each file
// is written beside its place and renamed over it, so a command started meanwhile reads a whole one.
import { build } from 'esbuild';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist/cli');
const ENTRIES = {
  'appliance-forge': 'src/cli/cli.ts',
  'in-namespace-main': 'src/imaging/disk/in-namespace-main.ts',
  'catalog-index-main': 'src/server/catalog/catalog-index-main.ts',
};

// undici's index loads all of undici at once (fetch, WebSocket, caches with node:sqlite, mocks, HTTP/2):
// the bundle takes the classes the sources import from their own modules, with the request methods the
// index adds to every dispatcher, and `request` (image builds only) from the whole package on first use.
const UNDICI = `const Dispatcher = require('undici/lib/dispatcher/dispatcher');
Object.assign(Dispatcher.prototype, require('undici/lib/api'));
let whole;
module.exports = {
  Pool: require('undici/lib/dispatcher/pool'),
  Agent: require('undici/lib/dispatcher/agent'),
  EnvHttpProxyAgent: require('undici/lib/dispatcher/env-http-proxy-agent'),
  // The installed package, not a copy in this file (esbuild leaves a createRequire call alone).
  get request() { return (whole ??= require('node:module').createRequire(__filename)('undici')).request; },
};`;
// HTTP/2 (no dispatcher here asks for it): its client module, which loads node:http2 and node:tls, runs
// on the first HTTP/2 connection instead of at load.
const LAZY_H2 = (real) => `let h2;
module.exports = function connectH2(...args) { return (h2 ??= require(${JSON.stringify(real)}))(...args); };`;
const UNDICI_NAMES = ['Pool', 'Agent', 'EnvHttpProxyAgent', 'request'];
// A name imported from undici that the module above lacks would be undefined at run time: refused here.
for (const file of readdirSync(path.join(root, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
  for (const m of readFileSync(path.join(root, 'src', file), 'utf8').matchAll(/import \{([^}]*)\} from 'undici'/g)) {
    const names = m[1].split(',').map((n) => n.trim()).filter((n) => n && !n.startsWith('type '));
    const missing = names.filter((n) => !UNDICI_NAMES.includes(n));
    if (missing.length) throw new Error(`src/${file} imports ${missing.join(', ')} from undici: add it to scripts/build-cli.mjs`);
  }
}
// Fastify (with its dependencies) is bundled: one file compiled instead of ~135 modules resolved and read one
// by one. It stays an optional peer dependency, the package a user installs to run a server: the bundle
// resolves the installed one first, so a missing fastify fails as before (engine/peer-packages.ts names it).
const FASTIFY = `require('node:module').createRequire(__filename).resolve('fastify');
module.exports = require('fastify/fastify.js');`;
// Modules Fastify loads at start and uses only when asked: node:https and node:http2 (its server module,
// for TLS or HTTP/2 servers, which none here is; with node:tls and more, ~10 ms) and semver (its plugin
// module, for a plugin that names the Fastify versions it needs, which none here does; ~10 ms of
// regular expressions built). Each is a stand-in that loads the module on its first use.
const LAZY = { 'node:https': 'server.js', 'node:http2': 'server.js', semver: 'plugin-utils.js' };
const lazyModule = (target) => `let m;
module.exports = new Proxy({}, { get: (_, k) => (m ??= require(${JSON.stringify(target)}))[k] });`;
const bundledFastify = {
  name: 'bundled-fastify',
  setup(b) {
    b.onResolve({ filter: /^(node:https|node:http2|semver)$/ }, (args) => (args.importer.endsWith(path.join('fastify', 'lib', LAZY[args.path]))
      ? { path: args.path.startsWith('node:') ? args.path : path.relative(root, createRequire(args.importer).resolve(args.path)), namespace: 'lazy-module' }
      : undefined));
    b.onLoad({ filter: /.*/, namespace: 'lazy-module' }, (args) => ({ contents: lazyModule(args.path.startsWith('node:') ? args.path : path.resolve(root, args.path)), loader: 'js', resolveDir: root }));
    b.onResolve({ filter: /^fastify$/ }, (args) => (args.importer.includes('node_modules') ? undefined : { path: 'fastify', namespace: 'bundled-fastify' }));
    b.onLoad({ filter: /.*/, namespace: 'bundled-fastify' }, () => ({ contents: FASTIFY, loader: 'js', resolveDir: root }));
  },
};
const slimUndici = {
  name: 'slim-undici',
  setup(b) {
    b.onResolve({ filter: /^undici$/ }, (args) => (args.importer.includes('node_modules') ? undefined : { path: 'undici', namespace: 'slim-undici' }));
    b.onLoad({ filter: /.*/, namespace: 'slim-undici' }, () => ({ contents: UNDICI, loader: 'js', resolveDir: root }));
    b.onResolve({ filter: /^\.\/client-h2\.js$/ }, (args) => (args.importer.endsWith(path.join('dispatcher', 'client.js')) ? { path: path.relative(root, path.join(args.resolveDir, 'client-h2.js')), namespace: 'lazy-h2' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'lazy-h2' }, (args) => ({ contents: LAZY_H2(path.resolve(root, args.path)), loader: 'js', resolveDir: root }));
  },
};

const result = await build({
  absWorkingDir: root,
  entryPoints: ENTRIES,
  outdir: dist,
  bundle: true,
  platform: 'node',
  target: 'node22',
  format: 'cjs',
  write: false,
  external: ['better-sqlite3'],
  plugins: [slimUndici, bundledFastify],
  // Names kept for stack traces; whitespace and syntax minified: a smaller file to read and compile on a cold cache.
  minifyWhitespace: true,
  minifySyntax: true,
  keepNames: true,
  // Licence comments in a file beside it: one non-ASCII character there makes Node read the whole bundle
  // as UTF-8 into a two-byte string, ~20 ms more than an ASCII file (esbuild escapes the rest).
  legalComments: 'external',
  logLevel: 'warning',
  banner: { js: '// Generated by scripts/build-cli.mjs from src/: do not edit.' },
});

// keepNames' helper redefines `name` on every function it wraps, each time one is made: each closure a
// request makes (a server's handlers, Fastify's own) cost an Object.defineProperty, which also turns the
// function's `name` from V8's built-in accessor into an own data property (~5 % of a signed GET's server
// time, bench/server-throughput.mjs). Most already bear the name (esbuild renamed nothing): the same
// property descriptor results when the definition is skipped for those (a function's `name` is
// non-writable, non-enumerable and configurable either way).
const NAME_HELPER = 'var __name=(target,value)=>__defProp(target,"name",{value,configurable:!0});';
const NAME_HELPER_FAST = 'var __name=(target,value)=>target.name===value?target:__defProp(target,"name",{value,configurable:!0});';

mkdirSync(dist, { recursive: true });
for (const f of result.outputFiles) {
  const tmp = `${f.path}.${process.pid}.tmp`;
  if (f.path.endsWith('.js') && f.text.includes('__name(')) {
    const at = f.text.indexOf(NAME_HELPER);
    if (at < 0 || f.text.indexOf(NAME_HELPER, at + 1) >= 0) throw new Error(`${path.relative(root, f.path)}: esbuild's __name helper is not the one scripts/build-cli.mjs rewrites (a new esbuild?)`);
    writeFileSync(tmp, f.text.slice(0, at) + NAME_HELPER_FAST + f.text.slice(at + NAME_HELPER.length));
  } else {
    writeFileSync(tmp, f.contents);
  }
  renameSync(tmp, f.path);
}
