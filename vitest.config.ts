import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 600_000,
    pool: 'forks',
    // Two files at a time even on two cores (Vitest's default there is one): most files spend
    // their time waiting on servers, browsers and child processes they start, and the suite
    // must finish well inside CI's half hour.
    maxWorkers: 2,
  },
});
