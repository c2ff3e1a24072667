import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
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
  },
});
