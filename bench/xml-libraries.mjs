// Why the XML codec is written from the model: the same image list of 1,000 records written and read
// by the codec (src/codec/xml.ts: typed values, canonical order, xsi:type, no DTD) and by two general
// XML libraries, xmlbuilder2 and fast-xml-parser, in one run; ratios are to the codec. The libraries
// write the codec's own document (their input is that document as their object form) and read it to
// an untyped tree of strings, which a client would still have to type and order from the model.
// Runs against the build: `npx tsc -p tsconfig.json && node bench/xml-libraries.mjs`.
import { createRequire } from 'node:module';
import { isDeepStrictEqual } from 'node:util';
import { XMLBuilder, XMLParser } from 'fast-xml-parser';
import { convert, create } from 'xmlbuilder2';
import { summary } from './lib/servers.mjs';

const require = createRequire(import.meta.url);
const { encode, decode } = require('../dist/src/codec/index.js');

const RECORDS = 1000;
const images = {
  total: RECORDS,
  images: Array.from({ length: RECORDS }, (_, i) => ({
    dbId: 1000 + i,
    name: `web & "api" <${i}>`,
    version: '007',
    revision: i % 7,
    compress: i % 2 === 0,
    size: 524288000 + i,
    sha256sum: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    status: { complete: true, error: false, cancelled: false, percentage: 100, message: `done ${i}` },
    targetFormat: { name: 'OpenStack QCOW2', type: 'cloud', credAccountType: 'openstack', uri: 'users/alice/targetformats/1' },
    installProfile: { diskSize: 10240, memorySize: 1024, swapSize: 512 },
    created: '2026-11-20T07:45:32.000Z',
    uri: `users/alice/appliances/${i % 20}/images/${i}`,
  })),
};

const xml = encode('xml', 'images', images);
const ATTR = { ignoreAttributes: false, attributeNamePrefix: '@', parseTagValue: false, trimValues: false };
const fxpParser = new XMLParser(ATTR);
const fxpBuilder = new XMLBuilder({ ...ATTR, suppressEmptyNode: true });
const asObject = fxpParser.parse(xml);
delete asObject['?xml'];

// Each writer must give back the same records through the codec's reader.
const same = (text) => isDeepStrictEqual(decode('xml', text, 'images').value, decode('xml', xml, 'images').value);
if (!same(fxpBuilder.build(asObject))) throw new Error('fast-xml-parser wrote another document');
if (!same(create(asObject).end())) throw new Error('xmlbuilder2 wrote another document');

function measure(label, fn, minMs = 1200) {
  for (let i = 0; i < 3; i++) fn(); // warm-up
  let runs = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < minMs) {
    fn();
    runs++;
  }
  return { label, ms: (performance.now() - t0) / runs };
}

const groups = [
  ['write', [
    measure('codec encode (from the model)', () => encode('xml', 'images', images)),
    measure('fast-xml-parser XMLBuilder', () => fxpBuilder.build(asObject)),
    measure('xmlbuilder2 create().end()', () => create(asObject).end()),
  ]],
  ['read', [
    measure('codec decode (typed records)', () => decode('xml', xml, 'images')),
    measure('fast-xml-parser XMLParser (strings)', () => fxpParser.parse(xml)),
    measure('xmlbuilder2 convert (strings)', () => convert(xml, { format: 'object' })),
  ]],
];
console.log(`node ${process.version}, ${RECORDS} image records, ${xml.length} bytes of XML; ratio = time / the codec's time`);
for (const [what, rows] of groups) {
  const codec = rows[0];
  for (const r of rows) console.log(`${what.padEnd(6)} ${r.label.padEnd(38)} ${r.ms.toFixed(2).padStart(8)} ms/doc  ${(r.ms / codec.ms).toFixed(2)}×`);
  const best = Math.min(...rows.slice(1).map((r) => r.ms));
  summary('xml-libraries', `XML ${what} ms/doc (1,000 images), codec`, Number(codec.ms.toFixed(2)), Number(best.toFixed(2)), codec.ms / best, 'baseline: the faster of fast-xml-parser and xmlbuilder2 (their reads give untyped strings)');
}
