// The initramfs of a real OS layer is made once, after every package is set up (the kernel's postinst
// makes none: INITRD=No), and the /initrd.img links the kernel's postinst would have made are there.
// Counted from the build's debug log (APPLIANCE_FORGE_LOG=debug), which names each initramfs made.
import { existsSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { OsLayerCache, type OsLayer } from '../../../src/imaging/os';
import { privateCache, requireBuildPrerequisites, spec } from './helpers';

describe('the initramfs of a real OS layer', () => {
  const priv = privateCache('initramfs');
  let layer: OsLayer;
  const notes: string[] = [];
  const savedLog = process.env.APPLIANCE_FORGE_LOG;

  beforeAll(async () => {
    requireBuildPrerequisites();
    process.env.APPLIANCE_FORGE_LOG = 'debug';
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      notes.push(String(chunk));
      return true;
    });
    try {
      layer = await new OsLayerCache({ dir: priv.path }).acquire(spec());
    } finally {
      write.mockRestore();
      if (savedLog === undefined) delete process.env.APPLIANCE_FORGE_LOG;
      else process.env.APPLIANCE_FORGE_LOG = savedLog;
    }
  }, 600_000);
  afterAll(async () => {
    await layer?.release();
    priv.cleanup();
  });

  it('is made once, with the links to it', () => {
    const made = notes.filter((n) => /update-initramfs: Generating \/boot\/initrd\.img-/.test(n));
    expect(made, notes.filter((n) => n.includes('mmdebstrap +')).join('')).toHaveLength(1);
    const version = /initrd\.img-(\S+)/.exec(made[0]!)![1]!;
    expect(existsSync(join(layer.dir, 'boot', `initrd.img-${version}`))).toBe(true);
    for (const link of ['initrd.img', 'initrd.img.old']) expect(readlinkSync(join(layer.dir, link)), link).toBe(`boot/initrd.img-${version}`);
    for (const link of ['vmlinuz', 'vmlinuz.old']) expect(readlinkSync(join(layer.dir, link)), link).toBe(`boot/vmlinuz-${version}`);
  });

  it('says where the build spent its time: each stage with its duration', () => {
    expect(notes.some((n) => /^debug: build: mmdebstrap \d+\.\d\d s\n$/.test(n))).toBe(true);
    expect(notes.some((n) => /^debug: build: mmdebstrap \+\d+\.\d s running --customize-hook/.test(n))).toBe(true);
  });
});
