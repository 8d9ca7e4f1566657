// The build queue on its own: order, the bound, cancel while waiting, a double release, fairness between owners.
import { describe, expect, it } from 'vitest';
import { BuildSlots } from '../../src/server/queue/build-slots';
import { AbortedError } from '../../src/errors';

describe('BuildSlots', () => {
  it('grants at most N at once, in order, and passes a released slot to the next waiter', async () => {
    const slots = new BuildSlots(2);
    const order: string[] = [];
    const a = await slots.acquire();
    const b = await slots.acquire();
    const waits: number[] = [];
    const c = slots.acquire(undefined, (n) => waits.push(n)).then((r) => (order.push('c'), r));
    const d = slots.acquire(undefined, (n) => waits.push(n)).then((r) => (order.push('d'), r));
    expect(waits).toEqual([0, 1]);
    expect(slots.waiting).toBe(2);
    a();
    a(); // a second release of the same slot changes nothing
    const rc = await c;
    expect(order).toEqual(['c']);
    expect(slots.waiting).toBe(1);
    b();
    const rd = await d;
    expect(order).toEqual(['c', 'd']);
    rc();
    rd();
    // Both slots free again: two immediate grants, the third waits.
    const x = await slots.acquire();
    const y = await slots.acquire();
    let third = false;
    void slots.acquire().then(() => (third = true));
    await new Promise((r) => setImmediate(r));
    expect(third).toBe(false);
    x();
    await new Promise((r) => setImmediate(r));
    expect(third).toBe(true);
    y();
  });

  it('a cancel while waiting leaves the queue and rejects with AbortedError', async () => {
    const slots = new BuildSlots(1);
    const held = await slots.acquire();
    const ac = new AbortController();
    const waiting = slots.acquire(ac.signal);
    expect(slots.waiting).toBe(1);
    ac.abort();
    await expect(waiting).rejects.toBeInstanceOf(AbortedError);
    expect(slots.waiting).toBe(0);
    await expect(slots.acquire(ac.signal)).rejects.toBeInstanceOf(AbortedError);
    held();
    (await slots.acquire())();
    expect(() => new BuildSlots(0)).toThrow(RangeError);
  });

  it("one owner's pile of waiting builds does not starve another owner's single build", async () => {
    const slots = new BuildSlots(1);
    const order: string[] = [];
    const held = await slots.acquire(undefined, undefined, 'alice');
    const wait = (owner: string, name: string): Promise<void> =>
      slots.acquire(undefined, undefined, owner).then((release) => {
        order.push(name);
        // Each build ends on the next turn: the slot then goes to whoever is next.
        setImmediate(release);
      });
    const all = [wait('alice', 'a2'), wait('alice', 'a3'), wait('alice', 'a4'), wait('alice', 'a5'), wait('bob', 'b1')];
    held();
    await Promise.all(all);
    // A plain FIFO gives a2 a3 a4 a5 b1: bob would wait for all of alice's builds.
    expect(order).toEqual(['b1', 'a2', 'a3', 'a4', 'a5']);
  });

  it('takes turns between owners and gives a free slot to the owner holding the fewest', async () => {
    const slots = new BuildSlots(2);
    const a1 = await slots.acquire(undefined, undefined, 'alice');
    const c1 = await slots.acquire(undefined, undefined, 'carol');
    const got: string[] = [];
    const releases = new Map<string, () => void>();
    const wait = (owner: string, name: string, ahead: number[]): Promise<void> =>
      slots.acquire(undefined, (n) => ahead.push(n), owner).then((r) => {
        got.push(name);
        releases.set(name, r);
      });
    const aheadA: number[] = [];
    const aheadB: number[] = [];
    const p = [wait('alice', 'a2', aheadA), wait('alice', 'a3', aheadA), wait('bob', 'b1', aheadB), wait('bob', 'b2', aheadB)];
    expect(aheadA).toEqual([0, 1]);
    // b1 goes after a2 only (round-robin), b2 after a2, b1 and a3.
    expect(aheadB).toEqual([1, 3]);
    expect(slots.waiting).toBe(4);
    // carol's slot frees: alice still holds one, bob none, so bob's first build goes although alice queued first.
    c1();
    await new Promise((r) => setImmediate(r));
    expect(got).toEqual(['b1']);
    // alice's slot frees: alice now holds none, bob one, so alice's a2.
    a1();
    await new Promise((r) => setImmediate(r));
    expect(got).toEqual(['b1', 'a2']);
    // a2 ends: alice holds none again, bob still one: a3 before b2.
    releases.get('a2')!();
    await new Promise((r) => setImmediate(r));
    expect(got).toEqual(['b1', 'a2', 'a3']);
    releases.get('b1')!();
    await Promise.all(p);
    expect(got).toEqual(['b1', 'a2', 'a3', 'b2']);
    releases.get('b2')!();
    releases.get('a3')!();
    expect(slots.waiting).toBe(0);
  });

  it('a cancel while waiting leaves only that build out of its owner\'s turn', async () => {
    const slots = new BuildSlots(1);
    const held = await slots.acquire(undefined, undefined, 'alice');
    const ac = new AbortController();
    const got: string[] = [];
    const b1 = slots.acquire(ac.signal, undefined, 'bob');
    const a2 = slots.acquire(undefined, undefined, 'alice').then((r) => (got.push('a2'), r));
    const b2 = slots.acquire(undefined, undefined, 'bob').then((r) => (got.push('b2'), r));
    ac.abort();
    await expect(b1).rejects.toBeInstanceOf(AbortedError);
    expect(slots.waiting).toBe(2);
    held();
    (await b2)();
    (await a2)();
    expect(got).toEqual(['b2', 'a2']);
  });
});
