// The one zod of the project: every module builds its schemas with this one (the architecture test
// refuses any other import of zod). It is zod/mini with zod's English messages. zod classic installs its
// methods on every schema class when it is imported, and esbuild cannot drop what a chain of methods
// never calls: bundled as a handler with one schema, zod classic imported in ~22 ms here and this
// module in ~11, and each schema costs less to build. Every Lambda and every CLI command parses with
// zod, so each cold start and each start of the CLI paid it. zod/mini carries no messages of its own
// ("Invalid input"); the English locale configured here gives the messages zod classic gave.

import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

config(en());

export * from 'zod/mini';
