// The order files start in. Vitest's own order runs the longest files first once its results cache knows
// their durations; a clean checkout (CI) has no cache, and vitest then starts the largest files (in bytes)
// first, so a short file that builds and boots real images can start last and run alone on one worker while
// the other waits. The files below (the slowest of a warm run, docs/testing.md "Cost") start first, in
// this order; the rest keep vitest's order.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export const SLOW_FIRST: readonly string[] = [
  'test/e2e/real-image-reproducible.test.ts',
  'test/imaging/os/layer.test.ts',
  'test/e2e/real-image.test.ts',
  'test/e2e/every-endpoint.test.ts',
  'test/action/action.test.ts',
  'test/imaging/base-disk.test.ts',
  'test/boot-check/boot-check.test.ts',
  'test/imaging/reproducible.test.ts',
  'test/package/pack.test.ts',
  'test/imaging/system.test.ts',
];

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root.replace(/\/+$/, '');
    const rank = (s: TestSpecification): number => {
      const i = SLOW_FIRST.indexOf(s.moduleId.slice(root.length + 1));
      return i < 0 ? SLOW_FIRST.length : i;
    };
    // Stable: ties keep vitest's order (its projects, then durations or sizes).
    return sorted.map((s, i) => ({ s, i })).sort((a, b) => rank(a.s) - rank(b.s) || a.i - b.i).map(({ s }) => s);
  }
}
