import { describe, expect, it } from 'vitest';
import { FiqlError, isForgeError } from '../../src/errors';
import { MAX_DEPTH, MAX_QUERY_LENGTH, parseFiql, type FiqlNode } from '../../src/fiql';

/** The node without the optional positions, to compare shapes. */
function shape(n: FiqlNode): unknown {
  if (n.type === 'cmp') return { s: n.selector, op: n.op, v: n.value, q: n.quoted };
  return { [n.type]: n.children.map(shape) };
}

function errorOf(text: string): FiqlError {
  try {
    parseFiql(text);
  } catch (e) {
    if (e instanceof FiqlError) return e;
    throw e;
  }
  throw new Error(`expected ${JSON.stringify(text)} to fail`);
}

describe('parseFiql', () => {
  it('reads the queries seen in real clients (wire contract §7)', () => {
    expect(shape(parseFiql("name=='*nginx*'"))).toEqual({ s: 'name', op: '==', v: '*nginx*', q: true });
    expect(shape(parseFiql("name=='web';version=='1.0'"))).toEqual({
      and: [{ s: 'name', op: '==', v: 'web', q: true }, { s: 'version', op: '==', v: '1.0', q: true }],
    });
    expect(shape(parseFiql('dbId==5'))).toEqual({ s: 'dbId', op: '==', v: '5', q: false });
    expect(shape(parseFiql("targetFormat.name=='OpenStack QCOW2'"))).toEqual({
      s: 'targetFormat.name', op: '==', v: 'OpenStack QCOW2', q: true,
    });
  });

  it('knows every operator', () => {
    for (const op of ['==', '!=', '=lt=', '=le=', '=gt=', '=ge='] as const) {
      const n = parseFiql(`size${op}10`);
      expect(n).toMatchObject({ type: 'cmp', selector: 'size', op, value: '10' });
    }
  });

  it('binds ; tighter than , and honours parentheses', () => {
    expect(shape(parseFiql('a==1;b==2,c==3'))).toEqual({
      or: [{ and: [{ s: 'a', op: '==', v: '1', q: false }, { s: 'b', op: '==', v: '2', q: false }] }, { s: 'c', op: '==', v: '3', q: false }],
    });
    expect(shape(parseFiql('a==1;(b==2,c==3)'))).toEqual({
      and: [{ s: 'a', op: '==', v: '1', q: false }, { or: [{ s: 'b', op: '==', v: '2', q: false }, { s: 'c', op: '==', v: '3', q: false }] }],
    });
  });

  it('reads both quote styles, backslash escapes and structure characters inside quotes', () => {
    expect(parseFiql(`n=="it's"`)).toMatchObject({ value: "it's", quoted: true });
    expect(parseFiql(`n=='say \\'hi\\' \\\\ ok'`)).toMatchObject({ value: "say 'hi' \\ ok" });
    expect(parseFiql(`n=='a;b,(c)'`)).toMatchObject({ value: 'a;b,(c)' });
    expect(parseFiql(`n==''`)).toMatchObject({ value: '', quoted: true });
  });

  it('ignores whitespace between tokens and trims bare values', () => {
    expect(shape(parseFiql(" name == 'a b' ; ( arch == amd64 ) "))).toEqual({
      and: [{ s: 'name', op: '==', v: 'a b', q: true }, { s: 'arch', op: '==', v: 'amd64', q: false }],
    });
    expect(parseFiql('name==OpenStack QCOW2')).toMatchObject({ value: 'OpenStack QCOW2', quoted: false });
  });

  it('records the positions of selector and value', () => {
    const n = parseFiql("a==1;bb=ge='x'");
    expect(n.type).toBe('and');
    if (n.type !== 'and') return;
    expect(n.children[1]).toMatchObject({ selector: 'bb', position: 5, valuePosition: 11 });
  });

  it.each([
    ['', 0, 'empty query'],
    ['   ', 0, 'empty query'],
    ['name', 4, 'expected an operator'],
    ['name=x', 4, 'expected an operator'],
    ['name=foo=bar', 4, 'expected an operator'],
    ['name==', 6, 'expected a value'],
    ['name==;a==1', 6, 'expected a value'],
    ["name=='abc", 6, 'never closed'],
    ['(a==1', 5, 'never closed'],
    ['a==1)', 4, "unbalanced ')'"],
    ['a==1;', 5, 'expected a selector'],
    [',a==1', 0, 'expected a selector'],
    ['1a==2', 0, 'expected a selector'],
    ["a=='x'b", 6, 'unexpected'],
    ["a=='x\\", 5, 'backslash at the end'],
    ['a.==1', 1, 'expected an operator'],
  ])('refuses %j at position %i', (text, position, message) => {
    const e = errorOf(text);
    expect(e.position).toBe(position);
    expect(e.message).toContain(message);
    expect(e.message).toContain(`position ${position}`);
    expect(isForgeError(e, FiqlError)).toBe(true);
  });

  it('bounds nesting depth with a FiqlError, not a stack overflow', () => {
    expect(() => parseFiql(`${'('.repeat(MAX_DEPTH)}a==1${')'.repeat(MAX_DEPTH)}`)).not.toThrow();
    const e = errorOf(`${'('.repeat(20_000)}a==1${')'.repeat(20_000)}`);
    expect(e.position).toBe(MAX_DEPTH);
  });

  it('refuses a query longer than MAX_QUERY_LENGTH', () => {
    const e = errorOf(`a=='${'x'.repeat(MAX_QUERY_LENGTH)}'`);
    expect(e.message).toContain('longer than');
  });

  it('refuses a non-string query with a FiqlError', () => {
    expect(() => parseFiql(undefined as unknown as string)).toThrow(FiqlError);
  });
});
