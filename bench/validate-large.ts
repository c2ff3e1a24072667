/**
 * Validation time of large workflows: a chain of N shell nodes, each reading the previous node's
 * stdout, plus a loop back to the start. `FLOWMEND_CORE=/path/to/functions/core` measures another
 * copy of the code (the figures before the fix came from main's copy).
 */
import { cpus } from 'node:os';
import { resolve } from 'node:path';

const core = resolve(process.env.FLOWMEND_CORE ?? new URL('../functions/core', import.meta.url).pathname);
const { validateWorkflow, WorkflowSchema } = (await import(`${core}/index.ts`)) as typeof import('../functions/core/index.ts');
const { builtinCatalog } = await import('../functions/nodes/catalog.ts');

const catalog = builtinCatalog;
const chain = (n: number) =>
  WorkflowSchema.parse({
    nodes: Array.from({ length: n }, (_, i) => ({ id: `n${i}`, type: 'shell', params: { command: i === 0 ? 'echo start' : `echo \${n${i - 1}.stdout}` } })),
    edges: Array.from({ length: n - 1 }, (_, i) => ({ from: `n${i}`, to: `n${i + 1}` })),
  });

console.log(`validate-large: ${cpus()[0]?.model ?? 'unknown cpu'} x ${cpus().length}, Node ${process.version}, core ${core}`);
for (const n of (process.argv[2] ?? '1000,5000,20000,200000').split(',').map(Number)) {
  const workflow = chain(n);
  const started = performance.now();
  const issues = validateWorkflow(workflow, catalog);
  const ms = performance.now() - started;
  console.log(`  ${String(n).padStart(7)} nodes: ${ms.toFixed(0).padStart(7)} ms (${issues.length} issues)`);
}
