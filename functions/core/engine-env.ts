/**
 * The engine's own variables (credentials and configuration): never handed to workflow code, whether a
 * shell command's environment, an MCP server's env or headers, or the process a command could read.
 */
export const ENGINE_VARIABLE = /^(AWS_|ANTHROPIC_|FLOWMEND_)/;

export const isEngineVariable = (name: string): boolean => ENGINE_VARIABLE.test(name);
