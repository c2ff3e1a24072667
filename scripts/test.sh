#!/usr/bin/env bash
# The one test command (npm test): typecheck, the offline CDK synth, then vitest, and a plain
# "N passed, N failed" closing line that CI reads.
set -uo pipefail
cd "$(dirname "$0")/.."
export CDK_DISABLE_CLI_TELEMETRY=true AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
# What the tests and the programs they start write to the temp dir (state dirs, workspaces, CDK's synth
# dirs) goes to one directory of this run's, removed when it ends: ~90 entries and ~40 MB a run were left
# in /tmp. FLOWMEND_KEEP_TEST_TMP=1 keeps it, and says where, to look at after a failure.
test_tmp="$(mktemp -d "${TMPDIR:-/tmp}/flowmend-test.XXXXXX")"
export TMPDIR="$test_tmp"
if [ -n "${FLOWMEND_KEEP_TEST_TMP:-}" ]; then
  trap 'echo "the tests'"'"' temp files are kept in $test_tmp"' EXIT
else
  trap 'rm -rf "$test_tmp"' EXIT
fi
rc=0
echo "== build (the CLI bundle the child-process tests run)"
node scripts/build.mjs || rc=1
echo "== lint and format (biome check)"
npx --no-install biome check . || rc=1
echo "== typecheck"
npx --no-install tsc -p tsconfig.json || rc=1
npx --no-install tsc -p functions/hosts/viewer/ui/tsconfig.json || rc=1
if [ -f cdk.json ]; then
  echo "== cdk synth (offline, no credentials)"
  # Into cdk.out (cdk.json); the bundling test loads these bundles instead of building them again.
  # With the emulator's stack (infra/emulator-stack.ts), which the emulator project deploys from here.
  npx --no-install cdk synth --quiet --no-notices -c flowmend:emulator=true >/dev/null && export FLOWMEND_SYNTH_OUT="$PWD/cdk.out" || rc=1
fi
echo "== vitest"
rm -f .vitest-results.json
npx --no-install vitest run --reporter=default --reporter=json --outputFile.json=.vitest-results.json "$@" || rc=1
node -e '
const fs = require("fs");
if (!fs.existsSync(".vitest-results.json")) { console.log("0 passed, 1 failed"); process.exit(0); }
const r = JSON.parse(fs.readFileSync(".vitest-results.json", "utf8"));
const skipped = r.numPendingTests + r.numTodoTests;
console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : ""));
'
exit $rc
