// A bootable Debian 12 qcow2 for the boot-check tests, built by the project's own image pipeline (the
// shared OS-layer cache, then buildImage with a root password) — the boot checker is tested on what users
// build. Built once per test process into a temporary directory; the OS layer is Debian 12 with the
// package set of examples/local.yml (Minimal + curl + nginx): the suite's real boot of the older release.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildImage, buildOsLayer, defaultCacheDir, defaultMirror, osLayerSpecOf, type SystemSettings } from '../../src/imaging';

/** The root password set in the fixture (a test constant: the image is throwaway and booted with -snapshot). */
export const FIXTURE_ROOT_PASSWORD = 'af-boot-fixture-Pw1';

export interface BootFixture {
  readonly qcow2: string;
  readonly user: 'root';
  readonly password: string;
}

let built: Promise<BootFixture> | undefined;

/** The fixture image, built on first use (from a cached layer: copy, settings, mke2fs -d, GRUB, qcow2). */
export function bootFixture(): Promise<BootFixture> {
  return (built ??= (async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'af-boot-fixture-'));
    chmodSync(dir, 0o711); // buildImage's work dir: the build's user namespace root passes through (src/host/sandbox.ts)
    // The hash comes from openssl, not from the code under test.
    const hash = execFileSync('openssl', ['passwd', '-6', FIXTURE_ROOT_PASSWORD], { encoding: 'utf8' }).trim();
    const settings: SystemSettings = {
      hostname: 'af-boot-fixture', diskMiB: 2048, swapMiB: 0, timezone: 'Etc/UTC', kernelParams: [],
      rootUser: { passwordHash: hash, disablePasswordLogin: false, sshKeys: [] }, users: [], groups: [],
    };
    const spec = osLayerSpecOf({
      suite: 'bookworm', profile: 'Minimal', packages: [{ name: 'curl' }, { name: 'nginx' }], disk: 'qcow2', cloudInit: false, settings, mirror: defaultMirror(),
    });
    const layer = await buildOsLayer(spec, { cacheDir: path.join(defaultCacheDir(), 'os') });
    try {
      const qcow2 = path.join(dir, 'fixture.qcow2');
      await buildImage({ layerDir: layer.dir, settings, cloudInit: false, disk: 'qcow2', compress: false, files: [], manifest: '{}', outFile: qcow2, workDir: dir });
      return { qcow2, user: 'root', password: FIXTURE_ROOT_PASSWORD };
    } finally {
      await layer.release();
    }
  })());
}
