import { existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import CostReporter from './test/support/cost-reporter.mts';
import SlowFirstSequencer from './test/support/sequencer.mts';

// Integration tests start real servers, build real images and talk to a real Keystone/Glance:
// generous timeouts, and files run in separate processes so a crash or a kill test stays contained.
const shared = {
  globalSetup: ['test/support/temp-root.ts'],
  pool: 'forks',
  testTimeout: 900_000,
  hookTimeout: 1_800_000,
} as const;

// The API suite again on a build farm (test/support/farm.ts): PostgreSQL, S3, an API node and two worker
// processes, where this machine can start them (root on Debian, the ../shared scripts beside the checkout).
const FARM_SUITE = [
  'test/server/{auth,catalog-stream,durability,errors,flow,install-profile,jobs,operations,package-pins,publication,storage-quota,upload-large}.test.ts',
  'test/client/reference-{server,jobs}.test.ts',
  'test/e2e/every-endpoint.test.ts',
  'test/console/console.test.ts',
];
const farmSkip =
  process.getuid?.() !== 0 ? 'not root' : !existsSync('/etc/debian_version') ? 'not Debian' : !existsSync('../shared/postgres/start-postgres.sh') || !existsSync('../shared/s3/start-s3.sh') ? 'no ../shared/{postgres,s3}' : undefined;
if (farmSkip) console.warn(`SKIP the API suite on a build farm (project farm): ${farmSkip}`);

export default defineConfig({
  test: {
    maxWorkers: 2,
    // vitest's own output, then what the run cost file by file (docs/testing.md "Cost").
    reporters: ['default', new CostReporter()],
    sequence: { sequencer: SlowFirstSequencer },
    projects: [
      { extends: true, test: { ...shared, name: 'embedded', include: ['test/**/*.test.ts'] } },
      ...(farmSkip ? [] : [{ extends: true, test: { ...shared, name: 'farm', include: FARM_SUITE, env: { APPLIANCE_FORGE_TEST_BACKEND: 'farm' } } }]),
    ],
  },
});
