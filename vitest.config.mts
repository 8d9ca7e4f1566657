import { defineConfig } from 'vitest/config';

// Integration tests start real servers, build real images and talk to a real Keystone/Glance:
// generous timeouts, and files run in separate processes so a crash or a kill test stays contained.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/temp-root.ts'],
    pool: 'forks',
    testTimeout: 900_000,
    hookTimeout: 1_800_000,
    maxWorkers: 2,
  },
});
