import { randomBytes } from 'node:crypto';
import { isLoopbackAddress } from '../api/local-origin-guard.ts';

export type ServeAccess = { ok: true; token?: string } | { ok: false; message: string };

/**
 * Who may reach `serve`: on a loopback address, this machine's users (the origin guard keeps web pages
 * out); on any other only with --allow-remote, and then with a token on every request (--token, else
 * FLOWMEND_API_TOKEN, else one made here and printed), since serve runs shell commands for its callers.
 */
export const serveAccess = (
  command: { readonly host: string; readonly allowRemote: boolean; readonly token: string | undefined },
  env: Readonly<Record<string, string | undefined>>,
): ServeAccess => {
  const loopback = isLoopbackAddress(command.host);
  if (!loopback && !command.allowRemote) {
    return {
      ok: false,
      message: `--host ${command.host} is not a loopback address: serve would run workflows (shell commands) for anyone who reaches it. Add --allow-remote, which requires a token on every request (--token, FLOWMEND_API_TOKEN, or one made and printed)`,
    };
  }
  if (command.token !== undefined && command.token.length < 16) return { ok: false, message: '--token must be at least 16 characters' };
  if (loopback && command.token === undefined) return { ok: true };
  return { ok: true, token: command.token ?? env.FLOWMEND_API_TOKEN ?? randomBytes(24).toString('base64url') };
};
