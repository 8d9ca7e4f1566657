// The defects an outside attack on `serve` found (issue 12), each replayed over real HTTP on
// 127.0.0.1 against a real server: every case fails on the code before its fix.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatableAppliance } from './support/fixtures';
import { startHarness, whyNotClientError, XML_HEADERS, type Harness } from './support/harness';

/** A loopback HTTP endpoint that records every request it receives (a stand-in for a hostile "Keystone"). */
async function listeningTrap(): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const srv: Server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url} ${body}`);
      res.writeHead(401, { 'content-type': 'text/plain' }).end('no');
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen, close: () => new Promise((r) => srv.close(() => r())) };
}

const dbIdOf = (xml: string): string => /<dbId>(\d+)<\/dbId>/.exec(xml)![1]!;

describe('issue 12 defects', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.close());

  it('defect 1: a stored cloud password never goes to a URL other than the stored one', async () => {
    const trap = await listeningTrap();
    try {
      const secret = 'stored-Secret-9f3a';
      const acc = await h.send('POST', 'users/alice/accounts', {
        headers: XML_HEADERS,
        body: `<credAccount><name>stored</name><keystoneUrl>http://127.0.0.1:9/v3</keystoneUrl><login>u</login><password>${secret}</password></credAccount>`,
      });
      expect(acc.status).toBe(201);
      const caid = dbIdOf(acc.text);
      // A real image record (its build is cancelled at once: the check comes before the image's state).
      const c = h.client(h.alice);
      const aid = await generatableAppliance(c, 'pub1');
      const img = await c.machineImage_generate({ uid: 'alice', aid, body: { targetFormat: { name: 'OpenStack QCOW2' }, installProfile: { diskSize: 64 } } });
      await c.machineImageGeneration_cancel({ uid: 'alice', aid, itid: String(img.dbId) });
      for (const [field, ref] of [
        ['keystoneUrl', `<dbId>${caid}</dbId>`],
        ['glanceUrl', `<uri>users/alice/accounts/${caid}</uri>`],
      ] as const) {
        const r = await h.send('POST', `users/alice/appliances/${aid}/pimages`, {
          headers: XML_HEADERS,
          body: `<publishImage><imageUri>users/alice/appliances/${aid}/images/${img.dbId}</imageUri><credAccount>${ref}<${field}>${trap.url}/v3</${field}></credAccount><keystoneProject>p</keystoneProject></publishImage>`,
        });
        expect(whyNotClientError(r, 400)).toBeUndefined();
        expect(r.text).toContain(field);
      }
      expect(trap.seen.join('\n')).not.toContain(secret);
      expect(trap.seen).toEqual([]);
    } finally {
      await trap.close();
    }
  });
});
