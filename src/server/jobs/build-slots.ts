// At most N image builds at once (`serve --max-builds`): a build is CPU, disk and memory heavy, so
// further generations wait in order for a slot, their status saying so, and a cancel while waiting
// leaves the queue at once.
import { AbortedError } from '../../errors';

export class BuildSlots {
  private busy = 0;
  private readonly queue: Array<() => void> = [];

  constructor(readonly size: number) {
    if (!Number.isSafeInteger(size) || size < 1) throw new RangeError(`build slots must be a whole number ≥ 1, got ${String(size)}`);
  }

  /** Builds waiting for a slot. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Resolves with the slot's release function; rejects with AbortedError if `signal` aborts first. */
  acquire(signal?: AbortSignal, onWait?: (ahead: number) => void): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(new AbortedError('cancelled while waiting for a build slot'));
    if (this.busy < this.size) {
      this.busy++;
      return Promise.resolve(this.releaser());
    }
    onWait?.(this.queue.length);
    return new Promise((resolve, reject) => {
      const grant = (): void => {
        signal?.removeEventListener('abort', leave);
        resolve(this.releaser());
      };
      const leave = (): void => {
        const i = this.queue.indexOf(grant);
        if (i >= 0) this.queue.splice(i, 1);
        reject(new AbortedError('cancelled while waiting for a build slot'));
      };
      signal?.addEventListener('abort', leave, { once: true });
      this.queue.push(grant);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.queue.shift();
      if (next) next(); // the slot passes straight to the next build
      else this.busy--;
    };
  }
}
