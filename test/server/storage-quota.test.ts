// Each user's quota of stored software files (limits.storageBytesPerUser, `serve --max-storage-mib-per-user`):
// an upload that would pass it is a 507 uforgeError that keeps nothing, whether its length is declared
// (refused before a byte is read) or not (cut off where it passes); a file an upload replaces does not count;
// another user's files do not count against yours.
import { randomFillSync } from 'node:crypto';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signTarget } from '../../src/auth/signer';
import type { CreatedUser } from '../../src/server';
import { startTestServer, type TestServer } from './helpers';

const MIB = 1024 * 1024;
const QUOTA = 3 * MIB;

describe('storage quota per user', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ limits: { storageBytesPerUser: QUOTA } });
  });
  afterAll(async () => t.close());

  async function artifact(user: CreatedUser, name: string): Promise<string> {
    const c = t.client(user);
    const sw = await c.mySoftware_create({ uid: user.login, body: { name, version: '1' } });
    const art = await c.mySoftwareArtifact_add({ uid: user.login, msid: sw.dbId!, body: { name: `${name}.bin` } });
    return `users/${user.login}/mysoftware/${sw.dbId!}/artifacts/${art.dbId!}`;
  }

  /** POSTs `bytes` as the artifact's file, with a Content-Length or (chunked) without. */
  async function upload(user: CreatedUser, rel: string, bytes: Buffer, chunked = false): Promise<{ status: number; text: string }> {
    const r = await request(`${t.server.url}/${signTarget(`${rel}/bin/f.bin`, user)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream', accept: 'application/json' },
      body: chunked ? Readable.from([bytes.subarray(0, MIB), bytes.subarray(MIB)]) : bytes,
    });
    return { status: r.statusCode, text: await r.body.text() };
  }

  const size = async (user: CreatedUser, rel: string): Promise<number | undefined> => {
    const r = await t.raw('GET', rel, { user, headers: { accept: 'application/json' } });
    return (JSON.parse(r.text) as { softwareArtifact: { size?: number } }).softwareArtifact.size;
  };

  it('refuses with 507 what passes the quota, declared or chunked, and keeps nothing of it', async () => {
    const a = await artifact(t.alice, 'first');
    const b = await artifact(t.alice, 'second');
    expect((await upload(t.alice, a, randomFillSync(Buffer.alloc(2 * MIB)))).status).toBe(200);

    const declared = await upload(t.alice, b, randomFillSync(Buffer.alloc(2 * MIB)));
    expect(declared.status).toBe(507);
    expect(JSON.parse(declared.text).uforgeError.localizedErrorMsg.message).toMatch(/does not fit in your storage quota of 3 MiB for software files \(1 MiB left\)/);
    const cut = await upload(t.alice, b, randomFillSync(Buffer.alloc(2 * MIB)), true);
    expect(cut.status).toBe(507);
    expect(await size(t.alice, b)).toBeUndefined();
    expect(await size(t.alice, a)).toBe(2 * MIB);
    // What fits still goes in.
    expect((await upload(t.alice, b, randomFillSync(Buffer.alloc(MIB)))).status).toBe(200);
  });

  it('does not count the file an upload replaces, nor another user’s files', async () => {
    const a = await artifact(t.alice, 'replaced');
    // Alice keeps 3 MiB already (the test above); a new file does not fit, replacing one of her own does.
    expect((await upload(t.alice, a, randomFillSync(Buffer.alloc(MIB)))).status).toBe(507);
    const [first] = (await t.client(t.alice).mySoftware_getAll({ uid: 'alice' })).mySoftwareList!.filter((s) => s.name === 'first');
    const firstArt = (await t.client(t.alice).mySoftwareArtifact_getAll({ uid: 'alice', msid: first!.dbId! })).softwareArtifacts![0]!;
    const rel = `users/alice/mysoftware/${first!.dbId!}/artifacts/${firstArt.dbId!}`;
    expect((await upload(t.alice, rel, randomFillSync(Buffer.alloc(2 * MIB)), true)).status).toBe(200);
    // Bob's quota is his own.
    expect((await upload(t.bob, await artifact(t.bob, 'bobs'), randomFillSync(Buffer.alloc(2 * MIB)))).status).toBe(200);
  });
});
