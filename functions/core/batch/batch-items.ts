import type { WorkflowNode } from '../ir.ts';
import { resolveValue, type TemplateContext, TemplateResolutionError } from '../templates.ts';
import { type BatchConfig, INDEX_NAME } from './batch-config.ts';

/** `[${__index__}]` inside another template: `${other.results[${__index__}].stdout}` (pflow's nested index). */
const NESTED_INDEX = /\[\$\{__index__\}\]/g;

/** The node's params with each nested index template replaced by the item's index, ready for the ordinary resolver. */
export const withIndex = (value: unknown, index: number): unknown => {
  if (typeof value === 'string') return value.includes('[${') ? value.replace(NESTED_INDEX, `[${index}]`) : value;
  if (Array.isArray(value)) return value.map((v) => withIndex(v, index));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withIndex(v, index)]));
  return value;
};

/** What an item's templates resolve against: the run's context plus the item (under `as`) and its index. */
export const itemContext = (context: TemplateContext, config: BatchConfig, item: unknown, index: number): TemplateContext => ({
  inputs: { ...context.inputs, [config.as]: item, [INDEX_NAME]: index },
  nodes: context.nodes,
});

/**
 * The batch's items: a literal array, or the value of its template; text holding a JSON array is parsed
 * (pflow's rule, so a shell node's stdout can feed a batch). Throws TemplateResolutionError.
 */
export const resolveItems = (config: BatchConfig, context: TemplateContext): unknown[] => {
  const value = typeof config.items === 'string' ? resolveValue(config.items, context) : config.items;
  let items = value;
  if (typeof value === 'string') {
    try {
      items = JSON.parse(value);
    } catch {
      items = undefined;
    }
  }
  if (!Array.isArray(items)) {
    const shown = typeof value === 'string' ? `text that is not a JSON array (${JSON.stringify(value.slice(0, 80))})` : value === null ? 'null' : typeof value;
    throw new TemplateResolutionError(`batch.items (${JSON.stringify(config.items).slice(0, 80)}) must be an array or text holding a JSON array, not ${shown}`);
  }
  return items;
};

/** The template roots a batch node's params may use besides inputs and nodes. */
export const batchRoots = (node: WorkflowNode): string[] => (node.batch ? [node.batch.as, INDEX_NAME] : []);
