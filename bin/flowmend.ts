// The CLI from source (through tsx): what bin/flowmend.cjs runs when the bundle in dist/ is missing or stale.
import { main } from './cli-main.ts';

await main(process.argv.slice(2), { endProcess: true });
