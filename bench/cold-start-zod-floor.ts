// The floor bench/cold-start.ts prints for any Lambda that parses with zod: the project's zod
// (functions/core/zod.ts: zod/mini with English messages) and one schema, bundled as a handler is.
// Not deployed.
import * as z from '../functions/core/zod.ts';

const Event = z.object({ runId: z.string() });

export const handler = async (event: unknown) => Event.parse(event);
