// Conditional-GET cache (wire contract §6) against a node:http server that honours If-None-Match
// and If-Modified-Since the way the service does.
import { describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client/index';
import { ResponseCache } from '../../src/client/cache';
import { encode } from '../../src/codec/index';
import { startScripted, type Double, closeAfterEach } from './http-double';

let server: Double | undefined;
let client: Client | undefined;
closeAfterEach(() => [client, server]);

/** An appliance whose name the test changes; the ETag follows the content. */
async function conditionalServer(state: { name: string; revision: number }, validator: 'etag' | 'last-modified'): Promise<Double> {
  return startScripted((req, res) => {
    if (req.method === 'PUT') {
      state.revision++;
      return void res.writeHead(204).end();
    }
    const etag = `"r${state.revision}"`;
    const lastModified = new Date(Date.UTC(2026, 0, 1, 0, 0, state.revision)).toUTCString();
    const fresh = validator === 'etag' ? req.headers['if-none-match'] === etag : req.headers['if-modified-since'] === lastModified;
    if (fresh) return void res.writeHead(304, validator === 'etag' ? { etag } : { 'last-modified': lastModified }).end();
    const format = req.headers.accept === 'application/json' ? 'json' : 'xml';
    res.writeHead(200, {
      'content-type': `application/${format}`,
      ...(validator === 'etag' ? { etag } : { 'last-modified': lastModified }),
    });
    res.end(encode(format, 'appliance', { name: state.name, revision: state.revision }));
  });
}

describe('conditional-GET cache', () => {
  it.each(['etag', 'last-modified'] as const)('revalidates with %s and serves the stored value on 304', async (validator) => {
    const state = { name: 'web', revision: 1 };
    server = await conditionalServer(state, validator);
    client = createClient({ url: server.url, auth: { login: 'alice', password: 'pw' }, cache: true });
    const first = await client.send('appliance_get', { aid: 1 });
    expect([first.value, first.fromCache]).toEqual([{ name: 'web', revision: 1 }, false]);
    state.name = 'changed-without-new-validator'; // a 304 must serve the stored body, not this
    const second = await client.send('appliance_get', { aid: 1 });
    expect([second.value, second.fromCache, second.status]).toEqual([{ name: 'web', revision: 1 }, true, 200]);
    const header = validator === 'etag' ? 'if-none-match' : 'if-modified-since';
    expect(server.seen.map((s) => s.headers[header] !== undefined)).toEqual([false, true]);
    // The value handed out is a fresh object each time: mutating it does not touch the cache.
    second.value.name = 'mutated';
    expect((await client.appliance_get({ aid: 1 })).name).toBe('web');
  });

  it('drops an entry on a write, and is off by default', async () => {
    const state = { name: 'web', revision: 1 };
    server = await conditionalServer(state, 'etag');
    client = createClient({ url: server.url, auth: { login: 'alice', password: 'pw' }, cache: { maxEntries: 4 } });
    await client.appliance_get({ aid: 1 });
    await client.appliance_update({ aid: 1, body: { name: 'web2' } });
    state.name = 'web2';
    expect(await client.appliance_get({ aid: 1 })).toEqual({ name: 'web2', revision: 2 });
    expect(server.seen[2]!.headers['if-none-match']).toBeUndefined();
    await client.close();
    client = createClient({ url: server.url, auth: { login: 'alice', password: 'pw' } });
    await client.appliance_get({ aid: 1 });
    await client.appliance_get({ aid: 1 });
    expect(server.seen.slice(3).map((s) => s.headers['if-none-match'])).toEqual([undefined, undefined]);
  });

  it('is bounded in entries and bytes (least recently used go first)', () => {
    const c = new ResponseCache({ maxEntries: 3, maxBytes: 1000 });
    const e = (n: number) => ({ etag: `"${n}"`, headers: {}, data: Buffer.alloc(n) });
    for (let i = 0; i < 10; i++) c.set(`a k${i}`, e(10));
    expect(c.size).toBe(3);
    expect(c.get('a k9')).toBeDefined();
    expect(c.get('a k0')).toBeUndefined();
    c.get('a k7'); // refresh k7: k8 is now the oldest
    c.set('a n1', e(10));
    expect([c.get('a k8'), c.get('a k7')].map(Boolean)).toEqual([false, true]);
    const b = new ResponseCache({ maxEntries: 100, maxBytes: 1000 });
    for (let i = 0; i < 5; i++) b.set(`a b${i}`, e(240));
    expect(b.size).toBe(4); // 5 × 240 > 1000: the oldest went
    expect(b.get('a b0')).toBeUndefined();
    b.set('a huge', e(400)); // over a quarter of maxBytes: not stored
    expect(b.get('a huge')).toBeUndefined();
    expect(() => new ResponseCache({ maxEntries: 0 })).toThrow(TypeError);
  });
});
