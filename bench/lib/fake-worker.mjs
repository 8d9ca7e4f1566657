// A farm worker (startWorker, from dist/) whose builds are fake: each sleeps FAKE_SECONDS, then writes
// FAKE_MIB of random bytes as the image, which the worker stores in the bucket and commits as any
// build (bench/scale-out.mjs). Everything but the image library is the real worker: queue, claims,
// heartbeats, fenced writes, S3 uploads. Arguments: a JSON object of startWorker's NodeOptions.
import { createHash, randomFillSync } from 'node:crypto';
import { open } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';

const require = createRequire(import.meta.url);
const { startWorker } = require('../../dist/src/server/index.js');
const { TARGET_FORMATS, defaultMirror } = require('../../dist/src/imaging/index.js');

const SECONDS = Number(process.env.FAKE_SECONDS ?? 5);
const MIB = Number(process.env.FAKE_MIB ?? 64);

const imaging = {
  targetFormats: TARGET_FORMATS,
  mirror: defaultMirror(),
  async build(order, signal, progress) {
    progress({ stage: 'disk', percentage: 50, message: 'sleeping (a fake build)' });
    await sleep(SECONDS * 1000, undefined, { signal });
    const fh = await open(order.outFile, 'wx', 0o600);
    const sha = createHash('sha256');
    const md5 = createHash('md5');
    const chunk = Buffer.alloc(1024 * 1024);
    try {
      for (let i = 0; i < MIB; i++) {
        randomFillSync(chunk);
        sha.update(chunk);
        md5.update(chunk);
        await fh.write(chunk);
      }
    } finally {
      await fh.close();
    }
    progress({ stage: 'disk', percentage: 99, message: 'written' });
    return { fileSize: MIB * 1024 * 1024, sha256: sha.digest('hex'), md5: md5.digest('hex'), virtualSizeBytes: MIB * 1024 * 1024, sbom: { packages: 0, spdx: '{}', cyclonedx: '{}' } };
  },
};

const worker = await startWorker({ ...JSON.parse(process.argv[2]), imaging });
process.stdout.write(`ready ${worker.summary}\n`);
process.once('SIGTERM', () => void worker.close().then(() => process.exit(0)));
