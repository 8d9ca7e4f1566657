// The whole Debian catalog (`GET distributions/1/pkgs` without a query) is written as it is read:
// every package in XML and JSON, well-formed (xmllint), an ETag that names it, other requests served
// while three whole-catalog answers stream (a request count, not a timing) and a memory bound.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client as HttpClient } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signTarget } from '../../src/auth/signer';
import { startTestServer, tempDir, type TestServer } from './helpers';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t?.close());

/** A signed GET read to its end without keeping the body: bytes and how many times `needle` occurs. */
async function drain(rel: string, accept: string, needle: string): Promise<{ status: number; bytes: number; count: number; tail: string }> {
  const base = new URL(t.server.url);
  const http = new HttpClient(base.origin);
  try {
    const res = await http.request({ path: `${base.pathname}/${signTarget(rel, t.alice)}`, method: 'GET', headers: { accept } });
    let bytes = 0;
    let count = 0;
    let carry = '';
    for await (const chunk of res.body) {
      bytes += chunk.length;
      const s = carry + chunk.toString('utf8');
      count += s.split(needle).length - 1;
      carry = s.slice(-(needle.length - 1));
    }
    return { status: res.statusCode, bytes, count, tail: carry };
  } finally {
    await http.close();
  }
}

describe('the whole catalog, streamed', () => {
  it('every package in XML and in JSON, the XML well-formed, the same count in both', async () => {
    const xml = await t.raw('GET', 'distributions/1/pkgs');
    expect(xml.status).toBe(200);
    expect(xml.headers['content-type']).toMatch(/^application\/xml/);
    const file = join(tempDir('forge-catalog-'), 'pkgs.xml');
    writeFileSync(file, xml.text);
    // xmllint, not the code under test, counts the packages.
    const count = Number(execFileSync('xmllint', ['--xpath', 'count(/*/pkgs/pkg)', file], { maxBuffer: 1 << 20 }).toString());
    expect(count).toBeGreaterThan(50_000);
    const json = await t.raw('GET', 'distributions/1/pkgs', { headers: { accept: 'application/json' } });
    expect(JSON.parse(json.text).packages.pkgs.pkg).toHaveLength(count);
    // A search is still a search: the same route with a query answers only what matches.
    const bash = await t.raw('GET', `distributions/1/pkgs?query=${encodeURIComponent("name=='bash'")}`, { headers: { accept: 'application/json' } });
    expect(JSON.parse(bash.text).packages.pkgs.pkg.map((p: { name: string }) => p.name)).toContain('bash');
  });

  it('an ETag per format and search; If-None-Match answers 304', async () => {
    const a = await t.raw('GET', 'distributions/1/pkgs?count=3');
    const j = await t.raw('GET', 'distributions/1/pkgs?count=3', { headers: { accept: 'application/json' } });
    const b = await t.raw('GET', 'distributions/1/pkgs?count=4');
    expect(a.headers.etag).toBeTruthy();
    expect(new Set([a.headers.etag, j.headers.etag, b.headers.etag]).size).toBe(3);
    const again = await t.raw('GET', 'distributions/1/pkgs?count=3', { headers: { 'if-none-match': a.headers.etag! } });
    expect(again.status).toBe(304);
    const bad = await t.raw('GET', 'distributions/1/pkgs?orderBy=nosuchfield');
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('uforgeError');
  });

  it('other requests are answered while three whole-catalog answers stream; memory stays bounded', async () => {
    global.gc?.();
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    let streaming = true;
    const streams = Promise.all([0, 1, 2].map(() => drain('distributions/1/pkgs', 'application/xml', '<pkg>'))).finally(() => (streaming = false));
    let served = 0;
    while (streaming) {
      const r = await t.raw('GET', 'users/alice');
      expect(r.status).toBe(200);
      if (streaming) served++;
    }
    const done = await streams;
    clearInterval(sampler);
    for (const d of done) {
      expect(d.status).toBe(200);
      expect(d.count).toBeGreaterThan(50_000);
      expect(d.tail).toBe('</ns0:packages>'.slice(-4));
    }
    // Built whole, each answer would hold the event loop to its end: a handful of requests at most.
    expect(served).toBeGreaterThanOrEqual(20);
    // Three 30 MiB answers built whole would take hundreds of MiB.
    expect((peak - rss0) / 2 ** 20).toBeLessThanOrEqual(100);
  });
});
