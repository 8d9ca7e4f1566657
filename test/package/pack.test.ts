// The package as users get it: `npm pack`, then `npm install <tarball>` into an empty project, then the
// command line through `npx` and the entry points through `require`. npm installs from its local cache
// (--prefer-offline; the registry is asked only for what the cache lacks). Install scripts are skipped:
// better-sqlite3 has no prebuilt binary reachable here and compiles from source (measured 5m46s wall,
// 2m06s CPU on this machine), which only `appliance-forge/server` and the embedded server need; what is
// checked here (the CLI's --version and validate, the client, the engine) loads no native module.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(__dirname, '../..');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string; license: string; repository: { url: string } };
const npm = (args: string[], cwd: string) =>
  execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, encoding: 'utf8', timeout: 480_000, env: { ...process.env, NODE_PATH: '' } });

describe('npm pack → npm install into an empty project', () => {
  let work: string;
  let tarball: string;
  let project: string;
  beforeAll(() => {
    // `npm test` compiles first; run alone, this builds dist/ once.
    if (!existsSync(path.join(root, 'dist/src/cli/main.js'))) execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: root });
    work = mkdtempSync(path.join(tmpdir(), 'af-pack-'));
    const name = npm(['pack', '--ignore-scripts', '--pack-destination', work], root).trim().split('\n').pop()!;
    tarball = path.join(work, name);
    project = path.join(work, 'project');
    mkdirSync(project);
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'empty-project', version: '1.0.0', private: true }));
    npm(['install', '--prefer-offline', '--ignore-scripts', tarball], project);
  }, 600_000);

  it('the tarball holds the build, the data, README, LICENSE and CHANGELOG, and no sources or tests', () => {
    const files = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).trim().split('\n').map((f) => f.replace(/^package\//, ''));
    for (const f of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'dist/src/cli/main.js', 'dist/src/index.d.ts', 'dist/provider/index.js', 'data/host-tools.json']) {
      expect(files, f).toContain(f);
    }
    expect(files.filter((f) => /^(src|test|bench|action|examples)\//.test(f) || /\.ts$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);
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

  it("require('appliance-forge') and its engine entry point load in the project", () => {
    const script = [
      "const forge = require('appliance-forge');",
      "const engine = require('appliance-forge/engine');",
      "const c = forge.createClient({ url: 'http://127.0.0.1:9/api', auth: { login: 'a', password: 'b' } });",
      "console.log(JSON.stringify({ client: typeof c.appliance_getAll, plan: typeof engine.planChanges, version: require('appliance-forge/package.json').version, from: require.resolve('appliance-forge') }));",
    ].join('\n');
    const r = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: project, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } })) as Record<string, string>;
    expect(r).toEqual({ client: 'function', plan: 'function', version: pkg.version, from: path.join(project, 'node_modules/appliance-forge/dist/src/index.js') });
  });
});

// examples/pulumi the way the README installs it: the clone built (`npm ci` runs prepare: dist/), then
// `npm install` in the example, which links the clone (`file:../..`) and installs @pulumi/pulumi. The
// "clone" is a folder holding links to this checkout's package.json, dist/, data/ and node_modules/, so
// nothing is written into the working tree.
describe('examples/pulumi installs from its clone', () => {
  it('npm install links appliance-forge from ../.. and the program type-checks against it', () => {
    if (!existsSync(path.join(root, 'dist/provider/index.js'))) execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: root });
    const clone = mkdtempSync(path.join(tmpdir(), 'af-clone-'));
    for (const f of ['package.json', 'dist', 'data', 'node_modules']) symlinkSync(path.join(root, f), path.join(clone, f));
    const example = path.join(clone, 'examples/pulumi');
    cpSync(path.join(root, 'examples/pulumi'), example, { recursive: true, filter: (src) => !src.includes('node_modules') });
    npm(['install', '--prefer-offline', '--ignore-scripts'], example);
    expect(realpathSync(path.join(example, 'node_modules/appliance-forge'))).toBe(realpathSync(clone));
    const r = execFileSync(process.execPath, ['-e', "console.log(Object.keys(require('appliance-forge/pulumi')).sort().join(','))"], { cwd: example, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
    expect(r.trim().split(',')).toEqual(expect.arrayContaining(['Appliance', 'MachineImage', 'Publication', 'Software']));
    execFileSync(process.execPath, [path.join(example, 'node_modules/typescript/bin/tsc'), '--noEmit', '--strict', '--esModuleInterop', '--module', 'node16', '--moduleResolution', 'node16', '--target', 'es2022', '--skipLibCheck', 'index.ts'], { cwd: example, encoding: 'utf8' });
  }, 600_000);
});
