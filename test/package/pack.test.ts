// The package as users get it: `npm pack`, then `npm install <tarball>` into an empty project, then the
// command line through `npx` and the entry points through `require`. npm installs from its local cache
// (--prefer-offline; the registry is asked only for what the cache lacks). A client-only install gets no
// server framework (fastify), no native SQLite addon (better-sqlite3) and no @actions/core: they are
// optional peer dependencies (or bundled into the Action), and the server commands name the package to
// install when they are missing. A second project installs the tarball with fastify and runs `serve`
// under Node 24 (node:sqlite, nothing to compile; Node 20 would need better-sqlite3, which compiles from
// source for 6 minutes here).
import { execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startServer, type RunningServer } from '../../src/server';
import { node24 } from '../support/node24';

const root = path.resolve(__dirname, '../..');
const execFileAsync = promisify(execFile);
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  version: string; license: string; repository: { url: string }; devDependencies: Record<string, string>; exports: Record<string, string>;
};
const pkgExports = pkg.exports;
/**
 * `npm test` compiles first; run alone, this builds dist/ once. The one-file command line is built as
 * `prepare` builds it (the packs below skip scripts): the installed command runs through it.
 */
let built = false;
function buildOnce(): void {
  if (!existsSync(path.join(root, 'dist/src/cli/main.js'))) execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: root });
  if (!built) execFileSync(process.execPath, [path.join(root, 'scripts/build-cli.mjs')], { cwd: root });
  built = true;
}
const npm = (args: string[], cwd: string) =>
  execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, encoding: 'utf8', timeout: 480_000, env: { ...process.env, NODE_PATH: '' } });

describe('npm pack → npm install into an empty project', () => {
  let work: string;
  let tarball: string;
  let project: string;
  beforeAll(() => {
    buildOnce();
    work = mkdtempSync(path.join(tmpdir(), 'af-pack-'));
    const name = npm(['pack', '--ignore-scripts', '--pack-destination', work], root).trim().split('\n').pop()!;
    tarball = path.join(work, name);
    project = path.join(work, 'project');
    mkdirSync(project);
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'empty-project', version: '1.0.0', private: true }));
    // Install scripts run as a user's would: nothing in a client-only install has one to run.
    npm(['install', '--prefer-offline', tarball], project);
  }, 600_000);

  it('a client-only install holds no server framework, native addon or @actions/core', () => {
    const installed = packagesIn(path.join(project, 'node_modules'));
    for (const heavy of ['fastify', 'better-sqlite3', '@actions/core', 'bindings', 'prebuild-install']) expect(installed, heavy).not.toContain(heavy);
    expect(findFiles(path.join(project, 'node_modules'), (f) => f.endsWith('.node'))).toEqual([]);
    // The figure for docs/install.md (108 packages before the split).
    console.log(`client-only install: ${installed.length} packages`);
    expect(installed.length).toBeLessThan(30);
  });

  it("the installed client and `plan` with a URL work with no server packages; serve and plan without a URL name the package to install", async () => {
    const data = mkdtempSync(path.join(tmpdir(), 'af-pack-srv-'));
    let server: RunningServer | undefined;
    try {
      const keys = await createUser(data, { login: 'carol' });
      server = await startServer({ dataDir: data });
      const script = [
        "const { createClient } = require('appliance-forge');",
        'const [url, login, publicKey, secretKey] = process.argv.slice(1);',
        'const c = createClient({ url, auth: { login, publicKey, secretKey } });',
        'c.user_get().then((u) => { console.log(u.loginName); return c.close(); });',
      ].join('\n');
      // Not execFileSync: the server answers from this process's event loop.
      const { stdout } = await execFileAsync(process.execPath, ['-e', script, server.url, keys.login, keys.publicKey, keys.secretKey], { cwd: project, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
      expect(stdout).toBe('carol\n');
      // The command line with a URL loads no server: plan works with no fastify installed (exit 2: changes).
      cpSync(path.join(root, 'examples'), path.join(project, 'examples'), { recursive: true });
      const env = { PATH: process.env.PATH ?? '', APPLIANCE_FORGE_URL: server.url, APPLIANCE_FORGE_USER: keys.login, APPLIANCE_FORGE_API_KEY: keys.publicKey, APPLIANCE_FORGE_SECRET_KEY: keys.secretKey };
      const plan = await execFileAsync(path.join(project, 'node_modules/.bin/appliance-forge'), ['plan', 'examples/local.yml', '--detailed-exitcode', '--quiet'], { cwd: project, encoding: 'utf8', env })
        .then((r) => ({ ...r, code: 0 }), (e: { code: number; stdout: string; stderr: string }) => e);
      expect([plan.code, plan.stderr]).toEqual([2, '']);
      expect(plan.stdout).toContain('+ appliance example-web 1.0: create');
    } finally {
      await server?.close();
      rmSync(data, { recursive: true, force: true });
    }
    const serve = spawnSync('npx', ['--no-install', 'appliance-forge', 'serve', '--port', '0', '--data-dir', path.join(work, 'data')], { cwd: project, encoding: 'utf8', timeout: 60_000 });
    expect(serve.status).toBe(1);
    expect(serve.stderr).toMatch(/appliance-forge serve needs the package fastify, an optional peer dependency of appliance-forge: npm install fastify/);
    // Without a URL, plan needs the embedded server: the same advice.
    const embedded = spawnSync('npx', ['--no-install', 'appliance-forge', 'plan', 'examples/local.yml', '--data-dir', path.join(work, 'data')], { cwd: project, encoding: 'utf8', timeout: 60_000, env: { PATH: process.env.PATH ?? '' } });
    expect(embedded.status).toBe(1);
    expect(embedded.stderr).toMatch(/the embedded server \(no service URL given\) needs the package fastify, .*: npm install fastify/);
  });

  it('the tarball holds the build, the data, README, LICENSE and CHANGELOG, and no sources or tests', () => {
    const files = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).trim().split('\n').map((f) => f.replace(/^package\//, ''));
    for (const f of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'dist/src/cli/main.js', 'dist/cli/appliance-forge.js', 'dist/cli/in-namespace-main.js', 'dist/cli/catalog-index-main.js', 'dist/src/index.d.ts', 'dist/provider/index.js', 'data/host-tools.json', 'schema/declaration.schema.json']) {
      expect(files, f).toContain(f);
    }
    expect(files.filter((f) => /^(src|test|bench|action|examples)\//.test(f) || /\.ts$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);
    // The build's catalog indexes (31 MB) stay in the checkout: an installed package writes them at a first start.
    expect(files.filter((f) => f.startsWith('dist/catalog-index/'))).toEqual([]);
    // The installed command runs its one-file build: npm gives the packed files one time, so it is not older than the entry.
    const entry = path.join(project, 'node_modules/appliance-forge/dist/src/cli/main.js');
    const script = `require(${JSON.stringify(entry)}).loadCli(); console.log(Object.keys(require.cache).flatMap((f) => f.split('node_modules/appliance-forge/')[1] ?? []).join(','))`;
    expect(execFileSync(process.execPath, ['-e', script], { cwd: project, encoding: 'utf8' })).toBe('dist/src/cli/main.js,dist/src/node-floor.js,dist/cli/appliance-forge.js\n');
    expect(readFileSync(path.join(project, 'node_modules/appliance-forge/LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} appliance-forge contributors\n/);
    expect(pkg.license).toBe('MIT');
    expect(pkg.repository.url).toMatch(/^git\+https:\/\/.+\.git$/);
  });

  it('npx appliance-forge --version and validate work in the project', () => {
    expect(execFileSync('npx', ['--no-install', 'appliance-forge', '--version'], { cwd: project, encoding: 'utf8' })).toBe(`appliance-forge ${pkg.version}\n`);
    cpSync(path.join(root, 'examples'), path.join(project, 'examples'), { recursive: true });
    const out = execFileSync('npx', ['--no-install', 'appliance-forge', 'validate', 'examples/local.yml'], { cwd: project, encoding: 'utf8' });
    expect(out).toBe('examples/local.yml: valid (0 errors, 0 warnings)\n');
  });

  // Pulumi's TypeScript template had `moduleResolution: node` until March 2026: such a project reads
  // subpaths through typesVersions, not exports.
  it('a moduleResolution node10 project type-checks an import of every subpath export', () => {
    const ts = path.join(work, 'node10');
    mkdirSync(ts);
    symlinkSync(path.join(project, 'node_modules'), path.join(ts, 'node_modules'));
    const subpaths = Object.keys(pkgExports).filter((k) => k !== '.' && !k.endsWith('.json')).map((k) => `appliance-forge${k.slice(1)}`);
    expect(subpaths).toEqual(expect.arrayContaining(['appliance-forge/pulumi', 'appliance-forge/pulumi/runtime/v1', 'appliance-forge/server']));
    writeFileSync(path.join(ts, 'index.ts'), ["import { createClient } from 'appliance-forge';", ...subpaths.map((s, i) => `import * as m${i} from '${s}';`), `export const loaded = [createClient, ${subpaths.map((_, i) => `m${i}`).join(', ')}];`, ''].join('\n'));
    writeFileSync(path.join(ts, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: 'commonjs', moduleResolution: 'node10', target: 'ES2022', skipLibCheck: true, types: [] }, files: ['index.ts'] }));
    const r = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', ts], { encoding: 'utf8' });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  // A Pulumi program installs the tarball (not a link to a clone, whose own node_modules holds another
  // @pulumi/pulumi): the program's @pulumi/pulumi is the one the provider entry loads.
  it('a Pulumi program with the tarball and @pulumi/pulumi resolves one copy of @pulumi/pulumi', () => {
    const program = path.join(work, 'pulumi-program');
    mkdirSync(program);
    writeFileSync(path.join(program, 'package.json'), JSON.stringify({ name: 'pulumi-program', version: '1.0.0', private: true }));
    npm(['install', '--prefer-offline', '--ignore-scripts', tarball, `@pulumi/pulumi@${pkg.devDependencies['@pulumi/pulumi']}`], program);
    const script = [
      "const path = require('node:path');",
      "const provider = require.resolve('appliance-forge/pulumi');",
      "console.log(JSON.stringify({ provider, program: require.resolve('@pulumi/pulumi'), fromProvider: require.resolve('@pulumi/pulumi', { paths: [path.dirname(provider)] }) }));",
    ].join('\n');
    const r = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: program, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } })) as { provider: string; program: string; fromProvider: string };
    expect(r.provider).toBe(path.join(program, 'node_modules/appliance-forge/dist/provider/index.js'));
    expect(r.fromProvider).toBe(r.program);
    expect(realpathSync(r.program)).toBe(path.join(realpathSync(program), 'node_modules/@pulumi/pulumi/index.js'));
    const copies = findFiles(path.join(program, 'node_modules'), (f) => f.endsWith(path.join('@pulumi', 'pulumi', 'package.json')));
    expect(copies).toEqual([path.join('@pulumi', 'pulumi', 'package.json')]);
  }, 600_000);

  it("require('appliance-forge') and its engine entry point load in the project", () => {
    const script = [
      "const forge = require('appliance-forge');",
      "const engine = require('appliance-forge/engine');",
      "const c = forge.createClient({ url: 'http://127.0.0.1:9/api', auth: { login: 'a', password: 'b' } });",
      "console.log(JSON.stringify({ client: typeof c.appliance_getAll, plan: typeof engine.planChanges, version: require('appliance-forge/package.json').version, from: require.resolve('appliance-forge') }));",
    ].join('\n');
    const r = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: project, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } })) as Record<string, string>;
    expect(r).toEqual({ client: 'function', plan: 'function', version: pkg.version, from: path.join(project, 'node_modules/appliance-forge/dist/src/index.js') });
    const schema = execFileSync(process.execPath, ['-p', "require('appliance-forge/schema/declaration.schema.json').title"], { cwd: project, encoding: 'utf8' });
    expect(schema).toBe('appliance-forge declaration\n');
  });
});

describe('npm install <tarball> fastify: the server', () => {
  const n24 = node24();
  let project: string;
  beforeAll(() => {
    buildOnce();
    const work = mkdtempSync(path.join(tmpdir(), 'af-pack-server-'));
    const name = npm(['pack', '--ignore-scripts', '--pack-destination', work], root).trim().split('\n').pop()!;
    project = path.join(work, 'project');
    mkdirSync(project);
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'server-project', version: '1.0.0', private: true }));
    npm(['install', '--prefer-offline', path.join(work, name), `fastify@${pkg.devDependencies.fastify}`], project);
  }, 600_000);
  afterAll(() => {
    for (const c of children) c.kill('SIGTERM');
  });
  const children: ReturnType<typeof spawn>[] = [];
  const bin = () => path.join(project, 'node_modules/appliance-forge/dist/src/cli/main.js');

  it('on Node 20 without better-sqlite3, the server commands say to install it', () => {
    if (process.versions.node.split('.').map(Number)[0]! >= 22) return; // node:sqlite is there
    const r = spawnSync(process.execPath, [bin(), 'users', 'add', 'bob', '--data-dir', path.join(project, 'data20')], { cwd: project, encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/needs the package better-sqlite3 \(on Node 20\.[\d.]+; Node 22\.13 or later has node:sqlite built in\), an optional peer dependency of appliance-forge: npm install better-sqlite3/);
  });

  it.skipIf(!n24.bin)('`appliance-forge serve` runs under Node 24 and answers the installed client', async () => {
    const node = n24.bin!;
    const data = path.join(project, 'data');
    const keys = JSON.parse(execFileSync(node, [bin(), 'users', 'add', 'bob', '--json', '--data-dir', data], { cwd: project, encoding: 'utf8' })) as { publicKey: string; secretKey: string };
    const child = spawn(node, [bin(), 'serve', '--port', '0', '--data-dir', data, '--no-catalog-refresh'], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const line = out.split('\n').find((l) => l.startsWith('http://'));
        if (line) resolve(line.trim());
      });
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
    });
    const script = [
      "const { createClient } = require('appliance-forge');",
      'const [url, publicKey, secretKey] = process.argv.slice(1);',
      "const c = createClient({ url, auth: { login: 'bob', publicKey, secretKey } });",
      'c.user_get().then((u) => { console.log(u.loginName); return c.close(); });',
    ].join('\n');
    expect(execFileSync(node, ['-e', script, url, keys.publicKey, keys.secretKey], { cwd: project, encoding: 'utf8' })).toBe('bob\n');
  }, 120_000);
});

/** Package names installed under a node_modules folder (scoped ones as `@scope/name`, nested ones too). */
function packagesIn(dir: string): string[] {
  const names: string[] = [];
  for (const e of existsSync(dir) ? readdirSync(dir) : []) {
    if (e.startsWith('.')) continue;
    const entries = e.startsWith('@') ? readdirSync(path.join(dir, e)).map((n) => `${e}/${n}`) : [e];
    for (const n of entries) {
      names.push(n);
      names.push(...packagesIn(path.join(dir, n, 'node_modules')));
    }
  }
  return names;
}

function findFiles(dir: string, match: (f: string) => boolean): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter(match);
}

// examples/pulumi the way docs/install.md installs it: the clone built (`npm ci` runs prepare: dist/), then
// `npm install` in the example, which links the clone (`file:../..`) and installs @pulumi/pulumi. The
// "clone" is a folder holding links to this checkout's package.json, tsconfig.json, dist/, data/ and
// node_modules/, so nothing is written into the working tree. The example's own tsconfig.json (Pulumi's
// template) is what `tsc -p examples/pulumi` reads; without it, tsc in the example found the root's,
// which leaves examples/ out, and passed whatever index.ts said.
describe('examples/pulumi installs from its clone', () => {
  it('npm install links appliance-forge from ../.., tsc -p examples/pulumi type-checks the program and catches a type error', () => {
    if (!existsSync(path.join(root, 'dist/provider/index.js'))) execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: root });
    const clone = mkdtempSync(path.join(tmpdir(), 'af-clone-'));
    for (const f of ['package.json', 'tsconfig.json', 'dist', 'data', 'node_modules']) symlinkSync(path.join(root, f), path.join(clone, f));
    const example = path.join(clone, 'examples/pulumi');
    cpSync(path.join(root, 'examples/pulumi'), example, { recursive: true, filter: (src) => !src.includes('node_modules') });
    npm(['install', '--prefer-offline', '--ignore-scripts'], example);
    expect(realpathSync(path.join(example, 'node_modules/appliance-forge'))).toBe(realpathSync(clone));
    const r = execFileSync(process.execPath, ['-e', "console.log(Object.keys(require('appliance-forge/pulumi')).sort().join(','))"], { cwd: example, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
    expect(r.trim().split(',')).toEqual(expect.arrayContaining(['Appliance', 'MachineImage', 'Publication', 'Software']));
    // What a folder link costs: the provider resolves @pulumi/pulumi from the clone's own node_modules, the
    // program from its own, so a program loads two copies (a Pulumi program installs the tarball instead).
    const resolveBoth = "const p = require.resolve('appliance-forge/pulumi'); console.log(JSON.stringify([require.resolve('@pulumi/pulumi'), require.resolve('@pulumi/pulumi', { paths: [require('node:path').dirname(p)] })]))";
    const [own, providers] = (JSON.parse(execFileSync(process.execPath, ['-e', resolveBoth], { cwd: example, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } })) as string[]).map((f) => realpathSync(f));
    expect(providers).not.toBe(own);
    const tsc = (dir: string) => spawnSync(process.execPath, [path.join(example, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', dir], { cwd: clone, encoding: 'utf8' });
    const good = tsc('examples/pulumi');
    expect(good.stdout + good.stderr).toBe('');
    expect(good.status).toBe(0);
    // The same program with a number where the software's version is text.
    const broken = path.join(clone, 'examples/pulumi-broken');
    cpSync(example, broken, { recursive: true, filter: (src) => !src.includes('node_modules') });
    symlinkSync(path.join(example, 'node_modules'), path.join(broken, 'node_modules'));
    const text = readFileSync(path.join(broken, 'index.ts'), 'utf8');
    writeFileSync(path.join(broken, 'index.ts'), text.replace("version: '1.0.0',", 'version: 100,'));
    const bad = tsc('examples/pulumi-broken');
    expect(bad.status).toBe(2);
    expect(bad.stdout).toMatch(/^examples\/pulumi-broken\/index\.ts\(11,\d+\): error TS2322: Type 'number' is not assignable to type 'Input<string>/m);
  }, 600_000);
});
