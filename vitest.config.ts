import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    setupFiles: ['./functions/adapters/node20-polyfills.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // CDK's built-in WASM CloudFormation validation costs ~2.3 s per worker on first synth; CI runs it once in `cdk synth`.
    env: {
      CDK_VALIDATION: 'false',
      CDK_DISABLE_CLI_TELEMETRY: 'true',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: ['test/emulator/**'] } },
      {
        extends: true,
        test: {
          // The stack deployed to the AWS emulator: deployed by the global setup while the other tests run
          // (it returns at once), its scenarios after them, two files at a time against the one stack (each
          // scenario works on runs of its own; two at once keep both cores busy while moto's Lambdas run).
          name: 'emulator',
          include: ['test/emulator/**/*.test.ts'],
          globalSetup: ['./test/emulator/global-setup.ts'],
          sequence: { groupOrder: 1 },
          maxWorkers: 2,
          testTimeout: 240_000,
          hookTimeout: 600_000,
        },
      },
    ],
  },
});
