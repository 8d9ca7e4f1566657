// A bounded per-address limit on failed authentications: past `max` failures
// within a window, the address gets 429 + Retry-After until the window ends, whatever it sends.
import type { Clock } from '../ports';

/** Addresses tracked at most; the oldest entry goes first when full (memory stays bounded under a spray). */
const MAX_ADDRESSES = 10_000;

export class FailureLimiter {
  private readonly byAddress = new Map<string, { count: number; since: number }>();
  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly clock: Clock,
  ) {}

  /** Seconds until `address` may try again, or 0 when it may now. */
  retryAfter(address: string): number {
    const e = this.current(address);
    return e && e.count >= this.max ? Math.max(1, Math.ceil((e.since + this.windowMs - this.clock.now().getTime()) / 1000)) : 0;
  }

  fail(address: string): void {
    const e = this.current(address);
    if (e) {
      e.count++;
      return;
    }
    if (this.byAddress.size >= MAX_ADDRESSES) this.byAddress.delete(this.byAddress.keys().next().value!);
    this.byAddress.set(address, { count: 1, since: this.clock.now().getTime() });
  }

  private current(address: string): { count: number; since: number } | undefined {
    const e = this.byAddress.get(address);
    if (e && this.clock.now().getTime() - e.since >= this.windowMs) {
      this.byAddress.delete(address);
      return undefined;
    }
    return e;
  }
}
