import { hasErrors, validateWorkflow } from '../../core/index.ts';
import { localSpecCatalog } from '../../nodes/local-specs.ts';
import type { Command } from './cli-args.ts';
import { EXIT } from './cli-output.ts';
import type { CommandContext } from './commands.ts';
import { renderIssues } from './render.ts';
import { loadWorkflowFile } from './workflow-file.ts';

/**
 * `flowmend validate`: the IR, the node specs and the checks, nothing else (no store, no run model, no
 * interpreter, no runner's library); `--online` adds the checks that reach the network.
 */
export const validateCommand = async (command: Extract<Command, { name: 'validate' }>, { io, limits, out, forms }: CommandContext): Promise<number> => {
  const loaded = await loadWorkflowFile(command.workflowPath, forms, limits);
  const issues = loaded.ok ? [...loaded.warnings, ...loaded.locate(validateWorkflow(loaded.workflow, localSpecCatalog))] : loaded.issues;
  if (loaded.ok && command.online) issues.push(...(await (await import('./validate-online.ts')).validateOnline(loaded.workflow, io.env)));
  const valid = !hasErrors(issues);
  if (out.json) io.stdout(`${JSON.stringify({ success: valid, valid, issues }, null, 2)}\n`);
  else
    io.stdout(
      valid
        ? `✓ ${command.workflowPath} is valid${issues.length ? `\n${renderIssues(issues)}` : ''}\n`
        : `✗ ${command.workflowPath} is invalid:\n${renderIssues(issues)}\n`,
    );
  return valid ? EXIT.ok : EXIT.usage;
};
