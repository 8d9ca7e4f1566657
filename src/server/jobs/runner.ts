// In-process background jobs (generation, publication). Injectable into buildServer so that tests
// can await `idle()`; one key per running job so that a second start of the same key is refused.
export type Work = (signal: AbortSignal) => Promise<void>;

export class JobRunner {
  private readonly running = new Map<string, { ctrl: AbortController; done: Promise<void> }>();

  get size(): number {
    return this.running.size;
  }

  isRunning(key: string): boolean {
    return this.running.has(key);
  }

  /** Start `work`; it must record its own outcome (errors are its job, never unhandled here). */
  start(key: string, work: Work): void {
    if (this.running.has(key)) throw new Error(`job ${key} already running`);
    const ctrl = new AbortController();
    const done = Promise.resolve()
      .then(() => work(ctrl.signal))
      .catch(() => undefined)
      .finally(() => {
        this.running.delete(key);
      });
    this.running.set(key, { ctrl, done });
  }

  cancel(key: string): boolean {
    const j = this.running.get(key);
    if (!j) return false;
    j.ctrl.abort();
    return true;
  }

  /**
   * Cancel and wait until the job has recorded its end, for at most `maxWaitMs`: a job that does not
   * heed its signal cannot hold a DELETE forever. False when the job was still running at the bound.
   */
  async cancelAndWait(key: string, maxWaitMs = 5000): Promise<boolean> {
    const j = this.running.get(key);
    if (!j) return true;
    j.ctrl.abort();
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<false>((resolve) => (timer = setTimeout(resolve, maxWaitMs, false)));
    try {
      return await Promise.race([j.done.then(() => true as const), bound]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Wait until no job runs (bounded: each round waits for jobs already started). */
  async idle(): Promise<void> {
    for (let round = 0; round < 1000 && this.running.size > 0; round++) {
      await Promise.all([...this.running.values()].map((j) => j.done));
    }
  }

  /** Abort every job and wait for them to record their end. */
  async close(): Promise<void> {
    for (const j of this.running.values()) j.ctrl.abort();
    await this.idle();
  }
}
