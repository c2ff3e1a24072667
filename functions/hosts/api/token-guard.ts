import { timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { ApiError, sendError } from './api-error.ts';

/** The cookie a browser keeps the token in once the viewer was opened with `?token=`. */
const COOKIE = 'flowmend_token';

const same = (given: string | undefined, token: string): boolean => {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
};

/**
 * `serve --allow-remote`: every request carries the token (`Authorization: Bearer <token>`, which the CLI
 * sends from FLOWMEND_API_TOKEN; or the viewer's cookie, set by opening the printed `?token=` URL once).
 * Anything else is a 401, before any route runs: on a network, serve runs shell commands for whoever
 * reaches it.
 */
export const tokenGuard =
  (token: string): MiddlewareHandler =>
  async (c, next) => {
    const header = c.req.header('authorization');
    const bearer = header?.startsWith('Bearer ') ? header.slice('Bearer '.length) : undefined;
    const query = c.req.query('token');
    if (same(bearer, token) || same(getCookie(c, COOKIE), token)) return next();
    if (same(query, token)) {
      setCookie(c, COOKIE, token, { httpOnly: true, sameSite: 'Strict', path: '/' });
      return next();
    }
    return sendError(
      c,
      new ApiError(401, 'UNAUTHORIZED', 'this server needs its token: send "Authorization: Bearer <token>" (FLOWMEND_API_TOKEN for the CLI)'),
    );
  };
