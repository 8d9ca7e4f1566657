// The job-is-finished rule of wire contract §8, as one table: error, then cancelled, then complete.
import { describe, expect, it } from 'vitest';
import { isTerminal, jobState } from '../../src/model/job-state';

describe('jobState and isTerminal', () => {
  it.each([
    [{ error: true, cancelled: true, complete: true }, 'failed', true],
    [{ error: false, cancelled: true }, 'cancelled', true],
    [{ complete: true }, 'complete', true],
    [{ complete: false, error: false, cancelled: false }, 'running', false],
    [{}, 'running', false],
  ] as const)('%j is %s', (s, state, terminal) => {
    expect(jobState(s)).toBe(state);
    expect(isTerminal(s)).toBe(terminal);
  });
});
