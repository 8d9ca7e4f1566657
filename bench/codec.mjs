// Codec throughput: encode + decode of an image list of 1,000 records, XML and JSON, against a
// baseline measured in the same run (JSON.stringify + JSON.parse of the same plain objects).
// Runs against the build: `npx tsc -p tsconfig.json && node bench/codec.mjs`.
import { createRequire } from 'node:module';
import { isDeepStrictEqual } from 'node:util';
import { summary } from './lib/servers.mjs';

const require = createRequire(import.meta.url);
const { encode, decode } = require('../dist/src/codec/index.js');

const RECORDS = 1000;
const status = (i) => ({ complete: true, error: false, cancelled: false, percentage: 100, message: `done ${i}` });
const images = {
  total: RECORDS,
  images: Array.from({ length: RECORDS }, (_, i) => ({
    created: '2026-11-20T07:45:32.000Z',
    dbId: 1000 + i,
    digest: `d${i.toString(16).padStart(8, '0')}`,
    lastModified: '2026-11-20T07:46:00.000Z',
    md5sum: 'd41d8cd98f00b204e9800998ecf8427e',
    sha256sum: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    size: 524288000 + i,
    status: status(i),
    parentUri: `users/alice/appliances/${i % 20}`,
    compress: i % 2 === 0,
    fileName: `web-${i}.qcow2`,
    fileSize: 524288000 + i,
    targetFormat: { name: 'OpenStack QCOW2', type: 'cloud', credAccountType: 'openstack', uri: 'users/alice/targetformats/1' },
    installProfile: { diskSize: 10240, memorySize: 1024, swapSize: 512 },
    name: `web & "api" <${i}>`,
    revision: i % 7,
    uri: `users/alice/appliances/${i % 20}/images/${i}`,
    version: '007',
  })),
};

function measure(label, fn, minMs = 1500) {
  for (let i = 0; i < 3; i++) fn(); // warm-up
  let runs = 0;
  const t0 = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < minMs) {
    fn();
    runs++;
    elapsed = Number(process.hrtime.bigint() - t0) / 1e6;
  }
  const perSec = (runs * RECORDS) / (elapsed / 1000);
  return { label, runs, ms: elapsed / runs, perSec };
}

const check = decode('xml', encode('xml', 'images', images), 'images').value;
if (!isDeepStrictEqual(check, images)) throw new Error('XML round trip changed the records');
const checkJ = decode('json', encode('json', 'images', images), 'images').value;
if (!isDeepStrictEqual(checkJ, images)) throw new Error('JSON round trip changed the records');

const baseline = measure('baseline JSON.stringify+parse', () => JSON.parse(JSON.stringify({ images })));
const rows = [
  baseline,
  measure('codec XML encode+decode', () => decode('xml', encode('xml', 'images', images), 'images')),
  measure('codec JSON encode+decode', () => decode('json', encode('json', 'images', images), 'images')),
  measure('codec XML encode only', () => encode('xml', 'images', images)),
  measure('codec XML decode only', (() => { const t = encode('xml', 'images', images); return () => decode('xml', t, 'images'); })()),
];
console.log(`node ${process.version}, ${RECORDS} image records per document, XML ${encode('xml', 'images', images).length} bytes, JSON ${encode('json', 'images', images).length} bytes`);
for (const r of rows) {
  const ratio = baseline.perSec / r.perSec;
  console.log(`${r.label.padEnd(32)} ${Math.round(r.perSec).toLocaleString('en').padStart(12)} records/s  ${r.ms.toFixed(2).padStart(8)} ms/doc  ${r === baseline ? '' : `${ratio.toFixed(1)}× slower than baseline`}`);
}
// The target ratio from interleaved runs (XML, JSON, XML, …): on a shared machine the load drifts
// between two separate measuring windows, not between two neighbouring runs.
const xmlRun = () => decode('xml', encode('xml', 'images', images), 'images');
const jsonRun = () => decode('json', encode('json', 'images', images), 'images');
let xmlMs = 0;
let jsonMs = 0;
let pairs = 0;
for (const t0 = performance.now(); performance.now() - t0 < 4000; pairs++) {
  let t = performance.now();
  xmlRun();
  xmlMs += performance.now() - t;
  t = performance.now();
  jsonRun();
  jsonMs += performance.now() - t;
}
const vsJson = xmlMs / jsonMs;
console.log(`XML encode+decode vs JSON encode+decode, ${pairs} interleaved pairs: ${(xmlMs / pairs).toFixed(1)} vs ${(jsonMs / pairs).toFixed(1)} ms/doc, ${vsJson.toFixed(2)}× the time (target ≤ 3×)`);
summary('codec', 'XML encode+decode ms/doc (1,000 images)', Number((xmlMs / pairs).toFixed(1)), Number((jsonMs / pairs).toFixed(1)), vsJson, 'baseline: JSON codec encode+decode, interleaved runs; target ≤ 3× the time');
