import type { RunReport, Workflow } from '../../core/index.ts';

/** The input marked `stdin: true` (validation allows at most one), which piped text fills. */
export const stdinInput = (workflow: Workflow): string | undefined => Object.entries(workflow.inputs).find(([, spec]) => spec.stdin === true)?.[0];

/** The output marked `stdout: true` (at most one): in text mode, `run` prints that output alone on stdout. */
export const stdoutOutput = (workflow: Workflow | undefined): string | undefined =>
  workflow === undefined ? undefined : Object.entries(workflow.outputs).find(([, spec]) => spec.stdout === true)?.[0];

/**
 * pflow's stdin routing: piped text becomes the `stdin: true` input, unless the command line gives that
 * input (the command line wins, as in pflow). Stdin is read only when such an input is waiting for it, so a
 * workflow without one never blocks on a parent that keeps stdin open. One trailing newline is dropped,
 * as pflow drops it (`echo hi |` gives "hi").
 */
export const routeStdin = (workflow: Workflow, params: Record<string, string>, readStdin: (() => string | undefined) | undefined): Record<string, string> => {
  const name = stdinInput(workflow);
  if (name === undefined || Object.hasOwn(params, name) || readStdin === undefined) return { ...params };
  const text = readStdin();
  return text === undefined ? { ...params } : { ...params, [name]: text.endsWith('\n') ? text.slice(0, -1) : text };
};

/** The value of the `stdout: true` output as printed: text as it is, anything else as JSON (pflow's rule), then a newline. */
export const streamedValue = (report: RunReport, output: string): string | undefined => {
  if (report.status !== 'succeeded' || !Object.hasOwn(report.result, output)) return undefined;
  const value = report.result[output];
  return `${typeof value === 'string' ? value : JSON.stringify(value)}\n`;
};
