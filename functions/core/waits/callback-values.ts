import type { Advance } from '../advance.ts';
import { nodeById } from '../ir.ts';
import { findTemplates, type TemplateContext, TemplateResolutionError } from '../templates.ts';
import { callbackUrl, mintCallbackToken } from './callback-token.ts';
import { CALLBACK_KEYS, WAIT_FOR_EVENT_TYPE } from './wait-nodes.ts';

const isCallbackKey = (key: unknown): boolean => (CALLBACK_KEYS as readonly unknown[]).includes(key);

/**
 * The template context with `${<wait-for-event node>.callback_url}` and `.callback_token` filled in, for the
 * node's next visit (an earlier node sends the link, the wait-for-event node then waits on the same
 * token). The values are derived, not stored, so a replay resolves the same params and cache key; they
 * are never outputs of any node. Without a callback key such a template fails before the node runs.
 */
export const callbackValues = (step: Advance, value: unknown, context: TemplateContext): TemplateContext => {
  let nodes: Record<string, Readonly<Record<string, unknown>>> | undefined;
  for (const ref of findTemplates(value)) {
    if (!isCallbackKey(ref.path[0]) || nodes?.[ref.root]?.[ref.path[0] as string] !== undefined) continue;
    if (nodeById(step.ir, ref.root)?.type !== WAIT_FOR_EVENT_TYPE) continue;
    const source = step.callbacks;
    if (!source) {
      throw new TemplateResolutionError(
        `\${${ref.expr}}: this host takes no callbacks, so wait-for-event '${ref.root}' has no callback URL (set FLOWMEND_CALLBACK_URL to the URL of \`flowmend serve\`)`,
      );
    }
    const token = mintCallbackToken(source.key, step.run.runId, ref.root, (step.run.visits[ref.root] ?? 0) + 1);
    step.noteMinted(token);
    nodes ??= { ...context.nodes };
    nodes[ref.root] = { ...nodes[ref.root], callback_token: token, callback_url: callbackUrl(source.baseUrl, step.run.runId, token) };
  }
  return nodes === undefined ? context : { ...context, nodes };
};

/** Whether the workflow has a wait-for-event node, so that an Advance loads the callback key before it resolves params. */
export const usesCallbacks = (step: Advance): boolean => step.ir.nodes.some((n) => n.type === WAIT_FOR_EVENT_TYPE);
