// Codec conformance: every document type round-trips in XML and JSON; every XML document the codec
// writes validates against uforge.xsd (xmllint); the decoding rules of wire contract §2–3.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decode, decodeJson, decodeXml, encode, encodeListChunks, encodeXml } from '../../src/codec/index';
import { DecodeError } from '../../src/errors';
import { documents, rootAliases, type DocumentRoot } from '../../src/model/resources';
import type { AnyModel } from '../../src/model/schema';
import { samplesOf } from './samples';

import { XSD } from '../support/shared';
const roots = Object.keys(documents) as DocumentRoot[];
const dir = mkdtempSync(join(tmpdir(), 'forge-codec-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('round trip of every document type', () => {
  for (const format of ['xml', 'json'] as const) {
    it.each(roots)(`${format}: %s`, (root) => {
      for (const n of [0, 1]) {
        for (const sample of samplesOf(documents[root] as AnyModel, n)) {
          const text = encode(format, root, sample as never);
          const back = decode(format, text, root);
          expect(back.value).toEqual(sample);
          expect(back.root).toBe(root);
          expect(encode(format, root, back.value)).toBe(text);
        }
      }
    });
  }
  it.each(Object.entries(rootAliases))('alias root %s round-trips with its kind', (alias, { root, kind }) => {
    const sample = samplesOf(documents[root] as AnyModel).find((s) => s.kind === kind)!;
    const xml = encodeXml(alias as DocumentRoot, sample as never);
    expect(xml).not.toContain('xsi:type');
    expect(decodeXml(xml, root)).toMatchObject({ element: alias, root, kind, value: sample });
  });
});

describe('every written XML document validates against uforge.xsd', () => {
  it('xmllint --schema accepts all samples', () => {
    const files: string[] = [];
    for (const root of roots) {
      for (const n of [0, 1]) {
        samplesOf(documents[root] as AnyModel, n).forEach((sample, i) => {
          const f = join(dir, `${root}-${n}-${i}.xml`);
          writeFileSync(f, encodeXml(root, sample as never));
          files.push(f);
        });
      }
    }
    for (const [alias, { root, kind }] of Object.entries(rootAliases)) {
      const f = join(dir, `${alias}.xml`);
      writeFileSync(f, encodeXml(alias as DocumentRoot, samplesOf(documents[root] as AnyModel).find((s) => s.kind === kind) as never));
      files.push(f);
    }
    let out: string;
    try {
      out = execFileSync('xmllint', ['--noout', '--schema', XSD, ...files], { stdio: 'pipe' }).toString() + '';
    } catch (e) {
      out = String((e as { stderr?: Buffer }).stderr ?? e);
      expect.fail(out.split('\n').filter((l) => !l.endsWith('validates')).slice(0, 20).join('\n'));
    }
    expect(files.length).toBeGreaterThan(roots.length);
  });
});

describe('escaping, read back by xmllint', () => {
  it('every &, < and > is escaped, one that looks like an entity too; quotes and ]]> stay readable', () => {
    const names = ['a & b', '&amp;', '&#65;', '&#x41;', '&x1;', '<b>', 'x]]>y', `"q" 'a'`, 'é 日本 😀'];
    for (const [i, name] of names.entries()) {
      const f = join(dir, `escape-${i}.xml`);
      writeFileSync(f, encodeXml('appliance', { name }));
      const read = execFileSync('xmllint', ['--noout', '--xpath', 'string(/*/name)', f], { stdio: 'pipe' }).toString().replace(/\n$/, '');
      expect(read).toBe(name);
      expect(decodeXml(encodeXml('appliance', { name }), 'appliance').value.name).toBe(name);
    }
  });
});

describe('lists written as they are read', () => {
  const cases = [
    { root: 'packages', list: 'pkgs', head: {} },
    { root: 'appliances', list: 'appliances', head: { total: 42 } },
    { root: 'credAccounts', list: 'credAccounts', head: {} },
  ] as const;
  for (const format of ['xml', 'json'] as const) {
    it.each(cases)(`${format}: %s in chunks joins into the whole document`, ({ root, list, head }) => {
      const item = documents[root].fields[list as never] as { model: () => AnyModel };
      for (const n of [0, 1, 5]) {
        const items = Array.from({ length: n }, (_, i) => samplesOf(item.model(), i)).flat();
        const chunks = [...encodeListChunks(format, root, head as never, list, items, 100)];
        expect(chunks.join('')).toBe(encode(format, root, { ...head, [list]: items } as never));
        if (n === 5) expect(chunks.length).toBeGreaterThan(2);
      }
    });
  }
  it('refuses a list that is not the last field written', () => {
    expect(() => [...encodeListChunks('xml', 'packages', { pkgs: [] } as never, 'pkgs', [])]).toThrow(TypeError);
    expect(() => [...encodeListChunks('json', 'packages', {} as never, 'addedPkgUris', [])]).toThrow(TypeError);
  });
});

describe('decoding rules', () => {
  const NS = 'xmlns:ns0="http://www.usharesoft.com/uforge"';
  it('booleans stay booleans, "007" stays a string, numbers are numbers', () => {
    const v = decodeXml(`<ns0:appliance ${NS}><version>007</version><revision>3</revision><name>0</name></ns0:appliance>`, 'appliance').value;
    expect(v).toEqual({ version: '007', revision: 3, name: '0' });
    const s = decodeXml(`<ns0:status ${NS}><complete>true</complete><error>false</error></ns0:status>`, 'status').value;
    expect(s).toEqual({ complete: true, error: false });
    expect(decodeJson('{"status":{"complete":true,"percentage":5,"message":"007"}}', 'status').value).toEqual({ complete: true, percentage: 5, message: '007' });
    expect(() => decodeJson('{"status":{"complete":"true"}}', 'status')).toThrow(DecodeError);
    expect(() => decodeJson('{"appliance":{"version":7}}', 'appliance')).toThrow(DecodeError);
    expect(() => decodeXml(`<ns0:status ${NS}><complete>yes</complete></ns0:status>`, 'status')).toThrow(/status.complete/);
  });
  it('ignores unknown elements and accepts any child order', () => {
    const xml = `<ns0:publishImage ${NS} xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="ns0:PublishImageOpenStack">
      <displayName>d</displayName><applianceUri>users/a/appliances/1</applianceUri><unknown><deep>1</deep></unknown>
      <keystoneProject>p</keystoneProject><cloudId>c</cloudId><name>n</name></ns0:publishImage>`;
    expect(decodeXml(xml, 'publishImage').value).toEqual({ kind: 'PublishImageOpenStack', displayName: 'd', keystoneProject: 'p', cloudId: 'c', name: 'n' });
    expect(decodeJson('{"appliance":{"zzz":1,"version":"1","name":"a"}}', 'appliance').value).toEqual({ version: '1', name: 'a' });
  });
  it('rejects DTDs and entity declarations', () => {
    const bombs = [
      `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><ns0:appliance ${NS}><name>&a;</name></ns0:appliance>`,
      `<!DOCTYPE ns0:appliance SYSTEM "file:///etc/passwd"><ns0:appliance ${NS}/>`,
      `<ns0:appliance ${NS}><name>&undefined;</name></ns0:appliance>`,
    ];
    for (const b of bombs) expect(() => decodeXml(b, 'appliance')).toThrow(DecodeError);
  });
  it('refuses what is not well-formed XML and nesting deeper than any document', () => {
    for (const bad of [`<ns0:appliance ${NS}><name>a]]>b</name></ns0:appliance>`, `<ns0:appliance ${NS}><name a="<">x</name></ns0:appliance>`, `<ns0:appliance ${NS}><name>\u0001</name></ns0:appliance>`]) {
      expect(() => decodeXml(bad, 'appliance')).toThrow(DecodeError);
    }
    const deep = `<ns0:appliance ${NS}><name>x</name>${'<a>'.repeat(100)}${'</a>'.repeat(100)}</ns0:appliance>`;
    expect(() => decodeXml(deep, 'appliance')).toThrow(/nested deeper/);
  });
  it('rejects an unknown xsi:type, in XML and JSON', () => {
    const xml = `<ns0:credAccount ${NS} xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="ns0:CredAccountAws"><name>x</name></ns0:credAccount>`;
    expect(() => decodeXml(xml, 'credAccount')).toThrow(/unknown xsi:type/);
    expect(() => decodeJson('{"credAccount":{"xsi:type":"CredAccountAws"}}', 'credAccount')).toThrow(DecodeError);
  });
  it('malformed input is a DecodeError, never a SyntaxError', () => {
    for (const t of ['', '{', '<a', '<ns0:appliance><b></ns0:appliance>', 'null', '[]']) {
      for (const f of ['xml', 'json'] as const) {
        const e = (() => {
          try {
            decode(f, t, 'appliance');
          } catch (x) {
            return x;
          }
        })();
        expect(e, `${f} ${JSON.stringify(t)}`).toBeInstanceOf(DecodeError);
      }
    }
  });
});
