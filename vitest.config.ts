import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['shared/**/*.test.ts', 'server/**/*.test.ts', 'test/**/*.test.ts', 'client/**/*.test.ts'],
    // API tests start real servers and run OpenCV through Python: give them room on a 2-core machine.
    // A PostgreSQL server for the database tests (they run on the embedded PGlite and on PostgreSQL).
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Files run in parallel workers; two matches the machine.
    maxWorkers: 2,
    // onnxruntime-node's telemetry off in every test process (server/telemetry-off.ts says why).
    env: { ORT_DISABLE_TELEMETRY: '1' },
  },
});
