import type { Workflow } from './ir.ts';
import { findTemplates } from './templates.ts';
import { formatIssuePath, type ValidationIssue } from './validation-issue.ts';

/** Headers whose values are credentials by default (lower case); an http node adds its own in `sensitive_headers`. */
export const SENSITIVE_HEADERS: readonly string[] = ['authorization', 'proxy-authorization', 'cookie', 'x-api-key'];

/** Params of an http node that hold a credential themselves. */
const CREDENTIAL_PARAMS = ['auth_token', 'api_key'];

/** Node types whose `headers` param is sent as HTTP headers. */
const HEADER_TYPES = new Set(['http']);

/**
 * A credential written literally in a sensitive header would be stored with the workflow, shown in
 * reports and sent to the repairer. It must come from a secret input instead (which is never stored).
 */
export function checkSensitiveHeaders(workflow: Workflow): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  workflow.nodes.forEach((node, index) => {
    if (!HEADER_TYPES.has(node.type)) return;
    for (const param of CREDENTIAL_PARAMS) {
      const value = node.params[param];
      if (typeof value !== 'string' || findTemplates(value).length > 0) continue;
      issues.push({
        path: formatIssuePath(['nodes', index, 'params', param]),
        code: 'LITERAL_CREDENTIAL',
        severity: 'error',
        message: `Node '${node.id}' writes its '${param}' literally: it would be stored with the workflow and shown to the repairer`,
        hint: `Declare a secret input and use it: "inputs": {"api_token": {"type": "string", "secret": true}} and "${param}": "\${api_token}"`,
      });
    }
    const headers = node.params.headers;
    if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) return;
    const extra = Array.isArray(node.params.sensitive_headers) ? node.params.sensitive_headers.map((h) => String(h).toLowerCase()) : [];
    for (const [name, value] of Object.entries(headers)) {
      if (!SENSITIVE_HEADERS.includes(name.toLowerCase()) && !extra.includes(name.toLowerCase())) continue;
      if (typeof value !== 'string' || findTemplates(value).length > 0) continue;
      issues.push({
        path: formatIssuePath(['nodes', index, 'params', 'headers', name]),
        code: 'LITERAL_CREDENTIAL',
        severity: 'error',
        message: `Node '${node.id}' writes the value of the sensitive header '${name}' literally: it would be stored with the workflow and shown to the repairer`,
        hint: `Declare a secret input and use it: "inputs": {"api_token": {"type": "string", "secret": true}} and "${name}": "Bearer \${api_token}" (pass it as api_token=... or FLOWMEND_SECRET_API_TOKEN)`,
      });
    }
  });
  return issues;
}
