// A failed job's words (jobs/job-errors.ts): the errors real parts throw (apt's log through explain(),
// a spawn past the system's argument limit, a file system error, an unreachable mirror, a tool's raw
// stderr) become one sentence without the server's folders or the tool's output, and apt's facts stay.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ImagingError } from '../../src/imaging';
import { explain } from '../../src/imaging/os/mmdebstrap';
import { mirrorState } from '../../src/imaging/os/mirror-state';
import { runTool } from '../../src/imaging/run';
import { jobErrorWords } from '../../src/server/jobs/job-errors';
import { ServiceError } from '../../src/server/service-error';

const dir = mkdtempSync(join(tmpdir(), 'forge-joberr-'));
const dataDir = join(dir, 'data');
const dirs = [dataDir, join(dir, 'cache'), tmpdir()];
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function thrown(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

/** No server folder, no temporary folder, one line. */
function clean(words: string): void {
  for (const d of dirs) expect(words).not.toContain(d);
  expect(words).not.toMatch(/\/tmp\/|\/var\//);
  expect(words).not.toContain('\n');
  expect(words.length).toBeLessThan(400);
}

describe('job errors in words', () => {
  it("keeps apt's words about a package the mirror lacks", () => {
    const log = 'Reading package lists...\nE: Unable to locate package nosuch-pkg\nE: Version \'9.9\' for \'curl\' was not found\nmmdebstrap: error: apt-get failed\n';
    const words = jobErrorWords(explain(log, 1, null), 'os-layer', dirs);
    expect(words).toContain('unknown package nosuch-pkg (not in the mirror)');
    expect(words).toContain('package curl version 9.9 is not in the mirror');
    expect(words).not.toContain('apt-get failed');
    clean(words);
  });

  it('says "too many packages" for a command line past the system limit, not "spawn E2BIG"', async () => {
    // 20,000 package names of 200 bytes: 4 MB of arguments, past Linux's limit (ARG_MAX 2 MB).
    const e = await thrown(runTool('true', Array.from({ length: 20_000 }, (_, i) => `pkg-${i}-${'x'.repeat(190)}`)));
    expect(String(e)).toContain('E2BIG');
    const words = jobErrorWords(e, 'os-layer', dirs);
    expect(words).toMatch(/more packages than one build can pass/);
    expect(words).not.toContain('E2BIG');
    clean(words);
  });

  it('a file system error of the server carries no path', async () => {
    writeFileSync(join(dir, 'file'), '');
    const e = await thrown(mkdir(join(dir, 'file', 'os', 'layers'), { recursive: true }));
    expect(String(e)).toContain(dir);
    const words = jobErrorWords(e, 'os-layer', dirs);
    expect(words).toMatch(/could not read or write its own files; tell the server's operator/);
    clean(words);
  });

  it('an unreachable mirror and a tool that dumps its output are named, not quoted', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s: Server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number };
        s.close(() => resolve(port));
      });
    });
    const mirror = await thrown(mirrorState({ suite: 'bookworm', mirror: { archive: `http://127.0.0.1:${closed}/debian` } }));
    const m = jobErrorWords(mirror, 'os-layer', dirs);
    expect(m).toMatch(/Debian mirror could not be reached/);
    expect(m).not.toContain('ECONNREFUSED');
    const tool = await thrown(runTool('sh', ['-c', `echo "mke2fs: ${dataDir}/tmp/job-1/disk.raw: Input/output error" >&2; exit 1`]));
    const t = jobErrorWords(tool, 'disk', dirs);
    expect(t).toBe("building the disk image failed: a build tool stopped with an error; retry, and if it fails again tell the server's operator (the server log has the details)");
    clean(t);
  });

  it("the user's own facts stay, the server's folders go; the server's own words stay as they are", () => {
    // The message staging.ts writes for a software file it cannot read (made here: reading needs a vanished upload).
    const input = new ImagingError('input', `source of /opt/app/run.sh cannot be read (ENOENT): ${dataDir}/files/abc-run.sh`);
    const words = jobErrorWords(input, 'disk', dirs);
    expect(words).toContain('source of /opt/app/run.sh cannot be read');
    clean(words);
    expect(jobErrorWords(new ServiceError(507, 'the server has 10 MiB of disk space free'), 'preparation', dirs)).toBe('the server has 10 MiB of disk space free');
    expect(jobErrorWords(new TypeError("Cannot read properties of undefined (reading 'x')"), 'disk', dirs)).toMatch(/error inside the server; tell the server's operator/);
  });
});
