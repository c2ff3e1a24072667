import type { MiddlewareHandler } from 'hono';
import { ApiError, sendError } from './api-error.ts';

/** Methods a browser sends cross-origin without asking first, or that change state: checked. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Names a loopback listener answers to; any other Host is a DNS-rebinding page. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export const isLoopbackAddress = (host: string): boolean => host === 'localhost' || host === '::1' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);

const forbidden = (message: string) => new ApiError(403, 'FORBIDDEN', message);

/**
 * What keeps another web page open in the user's browser from driving `flowmend serve` (which has no
 * credentials to check): a request that changes state must come from serve's own origin or from no
 * browser at all (the CLI and curl send neither `Origin` nor `Sec-Fetch-Site`); a browser always sends
 * one of them on a POST, PUT or DELETE. Bound to loopback, serve also refuses a `Host` that is not a
 * loopback name, so a page that re-binds its own DNS name to 127.0.0.1 cannot pass as same-origin.
 */
export const localOriginGuard =
  (options: { loopback: boolean }): MiddlewareHandler =>
  async (c, next) => {
    const url = new URL(c.req.url);
    if (options.loopback && !LOOPBACK_HOSTS.has(url.hostname)) {
      return sendError(c, forbidden(`this server answers to localhost or 127.0.0.1 only, not ${url.hostname}`));
    }
    if (!SAFE_METHODS.has(c.req.method)) {
      const site = c.req.header('sec-fetch-site');
      const origin = c.req.header('origin');
      // `none` is a request the user made themselves (typed, bookmarked): never a page's.
      if ((site !== undefined && site !== 'same-origin' && site !== 'none') || (origin !== undefined && origin !== url.origin)) {
        return sendError(
          c,
          forbidden(
            `a ${c.req.method} from another origin (${origin ?? site}) is refused: only pages served by this server, the CLI or a non-browser client may change runs, workflows or schedules`,
          ),
        );
      }
    }
    return next();
  };
