// The job runner's cancel-and-wait: a DELETE waits for the job to record its end (on the job's own
// promise), and a job that ignores its signal cannot hold it past the bound.
import { describe, expect, it } from 'vitest';
import { JobRunner } from '../../src/server/jobs/runner';

describe('JobRunner.cancelAndWait', () => {
  it('returns once the cancelled job has finished its work', async () => {
    const jobs = new JobRunner();
    const ended: string[] = [];
    // Like the real jobs, it heeds a signal aborted before it started as well as one aborted later.
    jobs.start('a', async (signal) => {
      if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      await new Promise((resolve) => setImmediate(resolve));
      ended.push('a');
    });
    expect(jobs.isRunning('a')).toBe(true);
    await expect(jobs.cancelAndWait('a')).resolves.toBe(true);
    expect(ended).toEqual(['a']);
    expect(jobs.isRunning('a')).toBe(false);
  });

  it('is true at once for a job that is not running', async () => {
    await expect(new JobRunner().cancelAndWait('none')).resolves.toBe(true);
  });

  it('gives up at its bound on a job that ignores the signal, which still runs', async () => {
    const jobs = new JobRunner();
    let release!: () => void;
    jobs.start('stuck', () => new Promise<void>((resolve) => (release = resolve)));
    await expect(jobs.cancelAndWait('stuck', 10)).resolves.toBe(false);
    expect(jobs.isRunning('stuck')).toBe(true);
    release();
    await jobs.idle();
    expect(jobs.isRunning('stuck')).toBe(false);
  });
});
