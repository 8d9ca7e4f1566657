// A host without mmdebstrap: the build fails before writing anything, naming the Debian package to
// install. The real tools stay installed; PATH is narrowed to a directory holding only the others.
import { mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isImagingError } from '../../../src/imaging/errors';
import { OsLayerCache, checkPrerequisites } from '../../../src/imaging/os';
import { findOnPath, sbinPath } from '../../../src/host/path';
import { currentBuildHost } from '../../../src/imaging/build-host';
import { privateCache, requireBuildPrerequisites, scratch, spec } from './helpers';

const bin = scratch('nobin');
const priv = privateCache('noprereq');
const savedPath = process.env.PATH;
beforeAll(() => {
  requireBuildPrerequisites();
  const dir = join(bin.path, 'bin');
  mkdirSync(dir);
  for (const tool of ['gpgv', 'dpkg-query', 'findmnt', 'umount']) {
    const found = findOnPath(tool, sbinPath());
    if (!found) throw new Error(`${tool} is not installed (bash scripts/prereqs.sh build)`);
    symlinkSync(found, join(dir, tool));
  }
  process.env.PATH = dir;
});
afterAll(() => {
  process.env.PATH = savedPath;
  bin.cleanup();
  priv.cleanup();
});

describe('a host without mmdebstrap', () => {
  it('checkPrerequisites names the Debian package to install', () => {
    let e: unknown;
    try {
      checkPrerequisites(currentBuildHost());
    } catch (err) {
      e = err;
    }
    expect(isImagingError(e, 'tool')).toBe(true);
    expect((e as Error).message).toMatch(/^mmdebstrap is not installed on this host: .*\(apt-get install mmdebstrap, or bash scripts\/prereqs.sh build for every tool of image builds\)$/);
    expect((e as Error).message).not.toMatch(/dpkg|util-linux/);
  });

  it('a build that is not in the cache fails with that error and leaves nothing', async () => {
    const cache = new OsLayerCache({ dir: priv.path });
    const e = await cache.acquire(spec({ packages: [{ name: 'curl' }] })).then(() => undefined, (err: unknown) => err);
    expect(isImagingError(e, 'tool')).toBe(true);
    expect((e as Error).message).toMatch(/mmdebstrap/);
    expect(await cache.keys()).toEqual([]);
    expect(readdirSync(join(priv.path, 'tmp'))).toEqual([]);
  });
});
