// The image builder's face (src/imaging/index.ts) loads no stage: a process that imports it for a format,
// an error or a type reads none of the OS, system, disk, SBOM or boot modules, only the few light ones
// that name the stages' vocabulary; a stage's module loads with the first call that runs it. Read from the
// compiled package (dist/, which `npm test` builds first), in a child process of its own.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(__dirname, '../..');
const dist = path.join(root, 'dist/src/imaging');

/** The modules of dist/src/imaging a child loaded: after importing the face, and after one lazy call. */
function loaded(): { atImport: string[]; afterDiff: string[] } {
  if (!existsSync(path.join(dist, 'index.js'))) execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: root });
  const script = `
    const dir = ${JSON.stringify(`${dist}/`)};
    const mine = () => Object.keys(require.cache).filter((k) => k.startsWith(dir)).map((k) => k.slice(dir.length)).sort();
    const imaging = require(dir + 'index.js');
    const atImport = mine();
    imaging.diffImages('/nonexistent/a.img', '/nonexistent/b.img').catch(() => undefined).then(() => {
      process.stdout.write(JSON.stringify({ atImport, afterDiff: mine() }));
    });`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as { atImport: string[]; afterDiff: string[] };
}

/** The stages' modules that only name things (bounds, the mirror and shared-tier vocabulary, a diff's report). */
const LIGHT = ['os/bounds.js', 'os/mirror.js', 'os/shared-tier.js', 'disk/diff-report.js'];
const STAGES = /^(os|system|disk|sbom|boot)\//;

describe("the image builder's face", () => {
  const { atImport, afterDiff } = loaded();

  it('loads none of the stages when imported', () => {
    expect(atImport).toContain('index.js');
    expect(atImport.filter((m) => STAGES.test(m) && !LIGHT.includes(m))).toEqual([]);
  });

  it("loads a stage's modules with the first call that runs it", () => {
    expect(atImport).not.toContain('disk/diff.js');
    expect(afterDiff).toContain('disk/diff.js');
  });
});
