// Ordered steps that hand values on (the end-to-end suite): a step that needs what an earlier step did not
// make is skipped and says why, and a step that sums up the whole run is skipped when any step before it
// failed. One failure then shows as one failure, not as every later step failing on `undefined`.
import { beforeEach, type TestContext } from 'vitest';

export interface Steps {
  /** Skips this step when any of `values` (named) is still undefined: the step that makes it failed. */
  needs(ctx: TestContext, values: Readonly<Record<string, unknown>>): void;
  /** Skips this step when any step before it failed (a summary over the whole run). */
  needsAllBefore(ctx: TestContext): void;
}

/** Call once at the top of a test file. */
export function orderedSteps(): Steps {
  const failed: string[] = [];
  beforeEach((ctx) => {
    ctx.onTestFailed(() => {
      failed.push(ctx.task.name);
    });
  });
  return {
    needs(ctx, values) {
      const missing = Object.entries(values).filter(([, v]) => v === undefined).map(([k]) => k);
      ctx.skip(missing.length > 0, `skipped: an earlier step did not make ${missing.join(', ')}`);
    },
    needsAllBefore(ctx) {
      ctx.skip(failed.length > 0, `skipped: it sums up the run, and these steps failed: ${failed.join('; ')}`);
    },
  };
}
