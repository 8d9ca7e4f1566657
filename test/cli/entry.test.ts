// The command's entry (src/cli/main.ts) and its one-file build (scripts/build-cli.mjs), on a copy of the
// build (a checkout's layout, its node_modules a link to this one's): the entry runs the build when it is
// at least as new as the entry, the module tree otherwise (the installed package: test/package/pack.test.ts); through the build a no-op
// plan loads a handful of the package's files instead of hundreds, and prints and exits exactly as the tree does.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpSync, existsSync, mkdtempSync, realpathSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(__dirname, '../..');

describe('the entry and the one-file build', () => {
  let copy: string;
  let main: string;
  let bundle: string;
  let data: string;
  beforeAll(() => {
    if (!existsSync(path.join(root, 'dist/src/cli/cli.js'))) execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: root });
    // Real path: Node names loaded files by their real paths.
    copy = realpathSync(mkdtempSync(path.join(tmpdir(), 'af-entry-')));
    symlinkSync(path.join(root, 'node_modules'), path.join(copy, 'node_modules'));
    for (const f of ['package.json', 'dist/src', 'dist/data', 'data', 'examples']) cpSync(path.join(root, f), path.join(copy, f), { recursive: true });
    // The build script writes beside itself: run a copy of it in the copy.
    cpSync(path.join(root, 'scripts/build-cli.mjs'), path.join(copy, 'scripts/build-cli.mjs'));
    cpSync(path.join(root, 'src'), path.join(copy, 'src'), { recursive: true });
    execFileSync(process.execPath, [path.join(copy, 'scripts/build-cli.mjs')], { cwd: copy });
    main = path.join(copy, 'dist/src/cli/main.js');
    bundle = path.join(copy, 'dist/cli/appliance-forge.js');
    data = path.join(copy, 'data-dir');
    // Preloaded: at exit, how many of the package's files the process loaded, how many files in all
    // (its dependencies' too), which of Node's TLS and HTTP/2 modules, and which of the tree's imaging and
    // OpenStack modules that only a build or a publication needs.
    writeFileSync(path.join(copy, 'count.js'), `process.on('exit', () => process.stderr.write('MODULES ' + Object.keys(require.cache).filter((f) => f.startsWith(${JSON.stringify(copy)} + '/dist/')).length + '\\n'
      + 'FILES ' + Object.keys(require.cache).length + '\\n'
      + 'BUILTINS ' + process.moduleLoadList.filter((m) => /^NativeModule (tls|https|http2)$/.test(m)).join(',') + '\\n'
      + 'BUILD ' + Object.keys(require.cache).filter((f) => /\\/(dist\\/src\\/(imaging\\/disk\\/(build|bootdisk|qcow2|filesystem|grub)|debian\\/(index|suite)|openstack\\/(index|publish))|node_modules\\/proper-lockfile\\/index)\\.js$/.test(f)).map((f) => f.replace(/.*\\/(dist\\/src|node_modules)\\//, '')).join(',') + '\\n'));\n`);
  }, 120_000);
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  /** The package's own files that `loadCli()` loads, as paths within the copy. */
  function loaded(): string[] {
    const script = `require(${JSON.stringify(main)}).loadCli(); console.log(JSON.stringify(Object.keys(require.cache)))`;
    const files = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as string[];
    return files.filter((f) => f.startsWith(copy)).map((f) => path.relative(copy, f));
  }

  function plan(preload: string[] = []) {
    const r = spawnSync(process.execPath, [...preload, main, 'plan', 'examples/local.yml', '--data-dir', data, '--detailed-exitcode'], { cwd: copy, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
    // The embedded server's port differs from run to run.
    return { code: r.status, stdout: r.stdout, stderr: r.stderr.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT') };
  }

  it('runs the build when it is not older than the entry, the tree after a later compile', () => {
    expect(loaded()).toEqual(['dist/src/cli/main.js', 'dist/src/node-floor.js', 'dist/cli/appliance-forge.js']);
    const later = new Date(Date.now() + 60_000);
    utimesSync(main, later, later);
    const tree = loaded();
    expect(tree).toContain('dist/src/cli/cli.js');
    expect(tree).not.toContain('dist/cli/appliance-forge.js');
    utimesSync(bundle, later, later);
    expect(loaded()).toEqual(['dist/src/cli/main.js', 'dist/src/node-floor.js', 'dist/cli/appliance-forge.js']);
  });

  it('a no-op plan through the build: the same output and exit code as through the tree, and a few files loaded', () => {
    const first = plan();
    expect(first.code).toBe(2);
    expect(first.stdout).toContain('+ appliance example-web 1.0: create');
    // Nothing created by plan: the same plan again, through the build and through the tree.
    const counted = plan(['-r', path.join(copy, 'count.js')]);
    const viaBundle = plan();
    const later = new Date(Date.now() + 120_000);
    utimesSync(main, later, later);
    const viaTree = plan();
    expect(viaBundle).toEqual(viaTree);
    expect(viaBundle).toEqual(first);
    // The package's files a no-op plan loads through the build: the entry, its Node version check and the build.
    expect(counted.stderr).toContain('MODULES 3\n');
    // Fastify and the rest are in the build (the preloaded counter is the fourth file); TLS and HTTP/2,
    // which nothing here speaks, are not loaded.
    expect(counted.stderr).toContain('FILES 4\n');
    expect(counted.stderr).toContain('BUILTINS \n');
    const countedTree = plan(['-r', path.join(copy, 'count.js')]);
    expect(Number(/MODULES (\d+)/.exec(countedTree.stderr)?.[1])).toBeGreaterThan(100);
    // The embedded server of a plan loads none of a build's disk stage (its file systems, boot loader and
    // formats) nor the OpenStack client, which load with the first build or publication, nor the Debian
    // index readers (suites with their gzip and child processes), which only a catalog refresh uses, nor
    // the OS layer cache's lock module (the start's sweep takes no lock).
    expect(countedTree.stderr).toContain('BUILD \n');
  }, 120_000);

  it("the build's undici `request` (loaded from node_modules on first use) reaches a mirror: serve's catalog refresh gets its 404", async () => {
    const mirror: Server = createServer((_req, res) => res.writeHead(404).end());
    await new Promise<void>((resolve) => mirror.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(mirror.address() as AddressInfo).port}/debian`;
    const child = spawn(process.execPath, [main, 'serve', '--port', '0', '--data-dir', path.join(copy, 'serve-data'), '--mirror', url], { cwd: copy, env: { PATH: process.env.PATH ?? '' } });
    let stderr = '';
    try {
      await new Promise<void>((resolve, reject) => {
        child.stderr.on('data', (c: Buffer) => {
          stderr += c.toString();
          if ((stderr.match(/catalog refresh of Debian/g) ?? []).length >= 2) resolve();
        });
        child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
      });
    } finally {
      child.kill('SIGTERM');
      await new Promise<void>((resolve) => mirror.close(() => resolve()));
    }
    expect(stderr).toMatch(/catalog refresh of Debian 13 failed, keeping .*: GET .*\/dists\/trixie\/InRelease: HTTP 404/);
  }, 60_000);
});
