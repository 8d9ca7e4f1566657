// The build queue on its own: order, the bound, cancel while waiting, a double release.
import { describe, expect, it } from 'vitest';
import { BuildSlots } from '../../src/server/jobs/build-slots';
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
});
