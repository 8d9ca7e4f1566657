// At most N image builds at once (`serve --max-builds`): a build is CPU, disk and memory heavy, so
// further generations wait for a slot, their status saying so, and a cancel while waiting leaves the
// queue at once. The wait is fair between users: a free slot goes to the waiting owner who holds
// the fewest slots, ties to the one served longest ago (round-robin), and in order within an owner;
// so one user's pile of builds cannot starve another user's single build.
import { AbortedError } from '../../errors';

interface Waiter {
  readonly grant: () => void;
}

export class BuildSlots {
  private busy = 0;
  /** Waiting builds by owner, in order; an owner without waiters has no entry. */
  private readonly queues = new Map<string, Waiter[]>();
  /** Slots each owner holds now. */
  private readonly held = new Map<string, number>();
  /** When each owner was last granted a slot (a counter), for the round-robin tie-break; one entry per user who ever built. */
  private readonly lastServed = new Map<string, number>();
  private grants = 0;

  constructor(readonly size: number) {
    if (!Number.isSafeInteger(size) || size < 1) throw new RangeError(`build slots must be a whole number ≥ 1, got ${String(size)}`);
  }

  /** Builds waiting for a slot. */
  get waiting(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.length;
    return n;
  }

  /**
   * Resolves with the slot's release function; rejects with AbortedError if `signal` aborts first.
   * `onWait` gets how many waiting builds go first when it is queued (other owners' turns included).
   */
  acquire(signal?: AbortSignal, onWait?: (ahead: number) => void, owner = ''): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(new AbortedError('cancelled while waiting for a build slot'));
    if (this.busy < this.size) {
      this.busy++;
      return Promise.resolve(this.take(owner));
    }
    onWait?.(this.ahead(owner));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          signal?.removeEventListener('abort', leave);
          resolve(this.take(owner));
        },
      };
      const leave = (): void => {
        const q = this.queues.get(owner);
        const i = q?.indexOf(waiter) ?? -1;
        if (q && i >= 0) {
          q.splice(i, 1);
          if (q.length === 0) this.queues.delete(owner);
        }
        reject(new AbortedError('cancelled while waiting for a build slot'));
      };
      signal?.addEventListener('abort', leave, { once: true });
      const q = this.queues.get(owner);
      if (q) q.push(waiter);
      else this.queues.set(owner, [waiter]);
    });
  }

  /** Under round-robin, a new waiter of `owner` goes after its own waiters and after one more turn of each other owner per own waiter. */
  private ahead(owner: string): number {
    const mine = this.queues.get(owner)?.length ?? 0;
    let n = mine;
    for (const [o, q] of this.queues) if (o !== owner) n += Math.min(q.length, mine + 1);
    return n;
  }

  private take(owner: string): () => void {
    this.held.set(owner, (this.held.get(owner) ?? 0) + 1);
    this.lastServed.set(owner, ++this.grants);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(owner) ?? 1) - 1;
      if (left > 0) this.held.set(owner, left);
      else this.held.delete(owner);
      const next = this.next();
      if (next) next.grant(); // the slot passes straight to the next build
      else this.busy--;
    };
  }

  /** The waiter whose owner holds the fewest slots, then was served longest ago; removed from its queue. */
  private next(): Waiter | undefined {
    let best: { owner: string; held: number; served: number } | undefined;
    for (const owner of this.queues.keys()) {
      const held = this.held.get(owner) ?? 0;
      const served = this.lastServed.get(owner) ?? 0;
      if (!best || held < best.held || (held === best.held && served < best.served)) best = { owner, held, served };
    }
    if (!best) return undefined;
    const q = this.queues.get(best.owner)!;
    const w = q.shift();
    if (q.length === 0) this.queues.delete(best.owner);
    return w;
  }
}
