import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PYTHON_CODE_WRAPPER } from '../functions/nodes/code-python.ts';

/** The Python Lambda's source: its handler (`run_code.handler`), beside which the code node's wrapper is written. */
export const PYTHON_RUNNER_SOURCE = fileURLToPath(new URL('../functions/hosts/lambda-python/', import.meta.url));

/**
 * Writes the RunCode Lambda's files into `outputDir`: the handler, and `code_wrapper.py`, the very wrapper
 * the local host runs with python3 (functions/nodes/code-python.ts), so the two hosts run user code alike.
 */
export const writePythonRunner = (outputDir: string): void => {
  copyFileSync(join(PYTHON_RUNNER_SOURCE, 'run_code.py'), join(outputDir, 'run_code.py'));
  writeFileSync(join(outputDir, 'code_wrapper.py'), PYTHON_CODE_WRAPPER);
};
