// Property tests (fast-check): the builder's output always parses back to the values given, and the
// parser fails on any input with a FiqlError and nothing else.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FiqlError } from '../../src/errors';
import { compileFiql, fiql, globMatcher, parseFiql, type FiqlNode } from '../../src/fiql';

const selector = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,6}(\.[A-Za-z_][A-Za-z0-9_]{0,6}){0,2}$/);
// Values rich in the characters that matter: quotes, backslashes, structure characters, wildcards, unicode.
const tricky = fc.constantFrom("'", '"', '\\', ';', ',', '(', ')', '*', '=', ' ', '==', '=lt=', 'é', '日本', '😀', '\u0000', '\n');
const value = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.array(fc.oneof(tricky, fc.string({ maxLength: 3 })), { maxLength: 8 }).map((a) => a.join('')),
);
const ops = ['eq', 'ne', 'lt', 'le', 'gt', 'ge'] as const;
const opText = { eq: '==', ne: '!=', lt: '=lt=', le: '=le=', gt: '=gt=', ge: '=ge=' } as const;

type Spec = { sel: string; op: (typeof ops)[number]; v: string } | { group: 'and' | 'or'; parts: Spec[] };

const spec: fc.Arbitrary<Spec> = fc.letrec<{ s: Spec }>((tie) => ({
  s: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ sel: selector, op: fc.constantFrom(...ops), v: value }),
    fc.record({ group: fc.constantFrom('and' as const, 'or' as const), parts: fc.array(tie('s'), { minLength: 1, maxLength: 3 }) }),
  ),
})).s;

function build(s: Spec): string {
  if ('sel' in s) return fiql[s.op](s.sel, s.v);
  return fiql[s.group](...s.parts.map(build));
}

/** The comparisons of a node, left to right, with the group structure kept. */
function flat(n: FiqlNode): unknown {
  if (n.type === 'cmp') return [n.selector, n.op, n.value];
  return { [n.type]: n.children.map(flat) };
}

/** What the spec means: a group of one part is that part, as the builder writes it. */
function meaning(s: Spec): unknown {
  if ('sel' in s) return [s.sel, opText[s.op], s.v];
  if (s.parts.length === 1) return meaning(s.parts[0]!);
  return { [s.group]: s.parts.map(meaning) };
}

describe('FIQL properties', () => {
  it('a built comparison parses back to exactly its selector, operator and value', () => {
    fc.assert(
      fc.property(selector, fc.constantFrom(...ops), value, (sel, op, v) => {
        const n = parseFiql(fiql[op](sel, v));
        expect(n).toMatchObject({ type: 'cmp', selector: sel, op: opText[op], value: v, quoted: true });
      }),
      { numRuns: 2000 },
    );
  });

  it('a built tree of and/or parses back to the same tree: no value changes the structure', () => {
    fc.assert(
      fc.property(spec, (s) => {
        expect(flat(parseFiql(build(s)))).toEqual(meaning(s));
      }),
      { numRuns: 1000 },
    );
  });

  it('the parser throws nothing but FiqlError, with a position inside the text', () => {
    const structural = fc
      .array(fc.oneof(fc.constantFrom('a', 'b.c', '==', '!=', '=lt=', '=x=', '=', ';', ',', '(', ')', "'", '"', '\\', ' ', '*', '1'), fc.string({ maxLength: 2 })), { maxLength: 25 })
      .map((a) => a.join(''));
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), structural), (text) => {
        try {
          parseFiql(text);
        } catch (e) {
          expect(e).toBeInstanceOf(FiqlError);
          const pos = (e as FiqlError).position;
          expect(pos).toBeGreaterThanOrEqual(0);
          expect(pos).toBeLessThanOrEqual(text.length);
        }
      }),
      { numRuns: 5000 },
    );
  });

  it('globMatcher agrees with an equivalent regular expression', () => {
    const pat = fc.array(fc.constantFrom('a', 'b', '*', 'ab'), { maxLength: 6 }).map((a) => a.join(''));
    const str = fc.array(fc.constantFrom('a', 'b'), { maxLength: 8 }).map((a) => a.join(''));
    fc.assert(
      fc.property(pat, str, (p, s) => {
        const re = new RegExp(`^${p.split('*').join('.*')}$`, 's');
        expect(globMatcher(p)(s)).toBe(re.test(s));
      }),
      { numRuns: 3000 },
    );
  });

  it('eq on a string selector matches the very value the builder was given (wildcards aside)', () => {
    const sels = { name: { type: 'string' as const, get: (r: { name: string }) => r.name } };
    fc.assert(
      fc.property(value.filter((v) => !v.includes('*')), (v) => {
        expect(compileFiql(fiql.eq('name', v), sels)({ name: v })).toBe(true);
        expect(compileFiql(fiql.ne('name', v), sels)({ name: v })).toBe(false);
        expect(compileFiql(fiql.eq('name', v), sels)({ name: `${v}x` })).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });
});
