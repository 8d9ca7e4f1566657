// A second process for the cross-process tests: `acquire` a layer (reports fromCache and the key), or
// `lease` an existing entry and hold it until stdin closes.
import { OsLayerCache } from '../../../src/imaging/os';
import type { OsLayerSpec } from '../../../src/imaging/stages';
import { messageOf } from '../../../src/errors';

type Args = { op: 'acquire'; cacheDir: string; spec: OsLayerSpec } | { op: 'lease'; cacheDir: string; key: string };

async function main(): Promise<void> {
  const a = JSON.parse(process.argv[2]!) as Args;
  const cache = new OsLayerCache({ dir: a.cacheDir });
  const say = (m: unknown): void => void process.stdout.write(`${JSON.stringify(m)}\n`);
  if (a.op === 'acquire') {
    try {
      const layer = await cache.acquire(a.spec);
      say({ ok: true, key: layer.key, fromCache: layer.fromCache, dir: layer.dir, packages: layer.installed.length });
      await layer.release();
      await cache.settle();
    } catch (e) {
      say({ ok: false, error: messageOf(e) });
    }
    return;
  }
  const layer = await cache.lease(a.key);
  say({ leased: layer !== undefined });
  process.stdin.resume();
  await new Promise((r) => process.stdin.on('end', r));
  await layer?.release();
}

main().catch((e: unknown) => {
  process.stdout.write(`${JSON.stringify({ error: messageOf(e) })}\n`);
  process.exit(1);
});
