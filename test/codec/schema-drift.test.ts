// Drift test (style example 3): every model's fields must keep the relative order of the xsd
// sequence of its type (base types first), list wrappers must hold the xsd's item element, and
// every document root must be a global element of its type. Parses uforge.xsd itself.
import { readFileSync } from 'node:fs';
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { documents } from '../../src/model/resources';
import { type AnyModel, fieldsOf } from '../../src/model/schema';

import { XSD } from '../support/shared';
type Node = Record<string, unknown>;

interface XsdElement {
  name: string;
  type?: string | undefined;
  /** Item element names of an anonymous wrapper type (`<pkgs><pkg/></pkgs>`). */
  items: string[];
}

function loadXsd(): { types: Map<string, Node[]>; attrsOf: Map<string, Node>; globals: Map<string, string> } {
  const tree = new XMLParser({ preserveOrder: true, ignoreAttributes: false, attributeNamePrefix: '' }).parse(readFileSync(XSD, 'utf8')) as Node[];
  const schema = tree.find((n) => 'xs:schema' in n)!['xs:schema'] as Node[];
  const types = new Map<string, Node[]>();
  const attrsOf = new Map<string, Node>();
  const globals = new Map<string, string>();
  for (const n of schema) {
    const a = (n[':@'] ?? {}) as Record<string, string>;
    if ('xs:complexType' in n) {
      types.set(a.name!, n['xs:complexType'] as Node[]);
      attrsOf.set(a.name!, a);
    }
    if ('xs:element' in n) globals.set(a.name!, a.type!);
  }
  return { types, attrsOf, globals };
}

const tagOf = (n: Node): string => Object.keys(n).find((k) => k !== ':@')!;
const attr = (n: Node, k: string): string | undefined => ((n[':@'] ?? {}) as Record<string, string>)[k];

/** Direct elements of a content model, through nested sequences and choices, not into elements. */
function elementsIn(children: Node[]): XsdElement[] {
  const out: XsdElement[] = [];
  for (const c of children) {
    const tag = tagOf(c);
    if (tag === 'xs:element') {
      const inner = (c[tag] as Node[]).find((x) => tagOf(x) === 'xs:complexType');
      out.push({ name: attr(c, 'name')!, type: attr(c, 'type'), items: inner ? elementsIn(inner['xs:complexType'] as Node[]).map((e) => e.name) : [] });
    } else if (tag === 'xs:sequence' || tag === 'xs:choice') out.push(...elementsIn(c[tag] as Node[]));
  }
  return out;
}

function sequenceOf(xsd: ReturnType<typeof loadXsd>, type: string, depth = 0): XsdElement[] {
  const body = xsd.types.get(type);
  if (!body || depth > 10) throw new Error(`type ${type} not found in uforge.xsd`);
  const content = body.find((n) => tagOf(n) === 'xs:complexContent');
  if (content) {
    const ext = (content['xs:complexContent'] as Node[]).find((n) => tagOf(n) === 'xs:extension')!;
    return [...sequenceOf(xsd, attr(ext, 'base')!, depth + 1), ...elementsIn(ext['xs:extension'] as Node[])];
  }
  return elementsIn(body);
}

/** Every model reachable from the documents, with each of its kinds. */
function allModels(): Array<{ m: AnyModel; kind?: string }> {
  const seen = new Set<AnyModel>();
  const out: Array<{ m: AnyModel; kind?: string }> = [];
  const walk = (m: AnyModel): void => {
    if (seen.has(m)) return;
    seen.add(m);
    for (const kind of m.kinds ? Object.keys(m.kinds) : [undefined]) {
      out.push(kind ? { m, kind } : { m });
      for (const [, f] of fieldsOf(m, kind)) if (f.t === 'object' || f.t === 'list') walk(f.model());
    }
  };
  Object.values(documents).forEach((m) => walk(m as AnyModel));
  return out;
}

describe('model against uforge.xsd', () => {
  const xsd = loadXsd();
  const cases = allModels().map(({ m, kind }) => [`${m.xsdType}${kind ? `/${kind}` : ''} (${m.root})`, m, kind] as const);

  /** What is wrong with a model's fields against the xsd: not in the sequence, out of order, wrong wrapper items. */
  function problems(m: AnyModel, kind?: string): string[] {
    const type = kind ?? m.xsdType;
    const seq = sequenceOf(xsd, type);
    const names = seq.map((e) => e.name);
    const out: string[] = [];
    let last = -1;
    for (const [name, f] of fieldsOf(m, kind)) {
      const i = names.indexOf(name);
      if (i < 0) out.push(`${type}.${name} is not in the xsd sequence`);
      else if (i <= last) out.push(`${type}.${name} is out of order (after ${names[last]})`);
      if (i < 0) continue;
      last = i;
      if (f.t === 'list' && !seq[i]!.items.includes(f.item)) out.push(`${type}.${name} wrapper does not hold ${f.item}`);
      if (f.t === 'uriList' && !(seq[i]!.type === 'UriList' || seq[i]!.items.includes('uri'))) out.push(`${type}.${name} is not a uri list`);
    }
    if (kind && !xsd.types.has(kind)) out.push(`kind ${kind} is not an xsd type`);
    return out;
  }

  it.each(cases)('%s keeps the xsd sequence order', (_label, m, kind) => {
    expect(problems(m, kind)).toEqual([]);
  });

  it.each(Object.entries(documents))('document root %s is a global element of its type', (root, m) => {
    expect(xsd.globals.get(root)).toBe((m as AnyModel).xsdType);
  });

  it('the test notices a moved field', () => {
    const entries = Object.entries(documents.appliance.fields);
    const d = entries.findIndex(([k]) => k === 'description');
    [entries[d], entries[d + 1]] = [entries[d + 1]!, entries[d]!]; // swap description and distributionName
    const moved = { ...documents.appliance, fields: Object.fromEntries(entries) } as AnyModel;
    expect(problems(moved)).toEqual(['Appliance.description is out of order (after distributionName)']);
    const seq = sequenceOf(xsd, 'Appliance').map((e) => e.name);
    expect(seq.indexOf('name')).toBeGreaterThan(seq.indexOf('description'));
    expect(seq.slice(0, 4)).toEqual(['created', 'dbId', 'digest', 'lastModified']);
  });
});
