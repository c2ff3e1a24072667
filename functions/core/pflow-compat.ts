/**
 * pflow's node types that flowmend does not run, with what to use instead. docs/pflow.md's
 * "pflow compatibility" table says the same; validation quotes it for an unknown type.
 */
const UNSUPPORTED: readonly { match: (type: string) => boolean; family: string; instead: string }[] = [
  {
    match: (t) => t.startsWith('git-'),
    family: "pflow's git nodes",
    instead: 'run git in a shell node, e.g. {"type": "shell", "params": {"command": "git status --porcelain"}}',
  },
  {
    match: (t) => t.startsWith('github-'),
    family: "pflow's github nodes",
    instead: 'call the GitHub REST API with an http node (auth_token: "${github_token}"), or run the gh CLI in a shell node',
  },
  {
    match: (t) => t === 'claude-code',
    family: "pflow's claude-code node (an agent that edits files)",
    instead: 'use an llm node for a single model call, or run `claude -p ...` in a shell node',
  },
  {
    match: (t) => t === 'agent',
    family: "pflow's agent node (Claude or Codex agents with tools)",
    instead:
      'use an llm node for a single model call (output_schema-style answers: ask for JSON and read it with a transform node), or run `claude -p ...` / `codex exec ...` in a shell node',
  },
  { match: (t) => t === 'echo', family: "pflow's test echo node", instead: 'use a shell node (`echo ...`) or a transform node' },
];

/** Why a pflow node type does not run here and what to use instead, or undefined for a type pflow does not have either. */
export const pflowAlternative = (type: string): string | undefined => {
  const entry = UNSUPPORTED.find((u) => u.match(type));
  return entry === undefined ? undefined : `${entry.family} are not supported by flowmend: ${entry.instead}`;
};
