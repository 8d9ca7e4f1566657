// Shared fixtures of the fault and load suites: random files with their sha256, a template ready to
// generate (Debian 12, profile Minimal), and a streamed sha256 of a download.
import { createHash, randomFillSync } from 'node:crypto';
import { closeSync, createReadStream, openSync, writeSync } from 'node:fs';
import { Writable } from 'node:stream';
import type { Client } from '../../../src/client';

export interface KnownFile {
  path: string;
  size: number;
  sha256: string;
}

/** A file of random bytes, written chunk by chunk, and its sha256. */
export function knownFile(path: string, size: number): KnownFile {
  const fd = openSync(path, 'w');
  const hash = createHash('sha256');
  const buf = Buffer.alloc(1024 * 1024);
  try {
    for (let left = size; left > 0; left -= buf.length) {
      const n = Math.min(left, buf.length);
      randomFillSync(buf, 0, n);
      hash.update(buf.subarray(0, n));
      writeSync(fd, buf, 0, n);
    }
  } finally {
    closeSync(fd);
  }
  return { path, size, sha256: hash.digest('hex') };
}

export async function sha256OfFile(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const c of createReadStream(path)) h.update(c as Buffer);
  return h.digest('hex');
}

/** Download through the client into a hash (nothing kept on disk). */
export async function sha256OfDownload(client: Client, uri: string): Promise<string> {
  const h = createHash('sha256');
  const sink = new Writable({
    write(chunk: Buffer, _e, cb) {
      h.update(chunk);
      cb();
    },
  });
  await client.download(uri, { to: sink });
  return h.digest('hex');
}

/** A template with the Minimal OS profile: ready for `machineImage_generate`. Returns its id. */
export async function generatableAppliance(client: Client, name: string): Promise<string> {
  const app = await client.appliance_create({ uid: client.login, body: { name, version: '1', distributionUri: 'distributions/1' } });
  const aid = String(app.dbId);
  await client.applianceOSProfile_create({
    uid: client.login,
    aid,
    body: { kind: 'LinuxProfile', name: 'Minimal', standardProfileUri: 'distributions/1/profiles/1' },
  } as never);
  return aid;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
