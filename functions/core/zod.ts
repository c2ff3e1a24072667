// The zod every module of core, the node specs and the Lambdas' shared code builds its schemas with:
// zod/mini, with zod's English messages. zod classic (`import * as z from 'zod'`) installs its methods
// on every schema class at import, and esbuild cannot drop what a chain of methods never calls: a
// bundle of zod classic and one schema imports in ~25 ms here, of zod/mini in ~5 ms, and each schema
// costs about 40% less to build. Every Lambda imports core's schemas, so this is paid by every cold
// start. zod/mini carries no messages by default ("Invalid input"); the English locale is configured
// here, so a module that builds its schemas through this one gives the same messages as classic.
// Classic and mini schemas are one kind (zod/v4/core): the hosts that still use classic (the API, the
// CLI's own arguments) compose and parse these schemas as they are.

import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

config(en());

export * from 'zod/mini';
