import type { IncomingMessage } from 'node:http';

/** A request body as text, for the loopback fakes of AWS services. */
export const readBody = async (req: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};
