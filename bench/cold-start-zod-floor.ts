// The floor bench/cold-start.ts prints for any Lambda that parses with zod: zod classic and one schema,
// bundled as a handler is. Not deployed.
import * as z from 'zod';

const Event = z.object({ runId: z.string() });

export const handler = async (event: unknown) => Event.parse(event);
