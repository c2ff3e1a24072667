import type { Workflow } from './ir.ts';

/**
 * The workflow's edges as a graph, with its strongly connected components, so that validation
 * answers "does a path lead from a to b" and "can this cycle end" in about linear time: a 20k-node
 * workflow used to cost quadratic time and memory (one ancestor set per node).
 */
export interface WorkflowGraph {
  readonly successors: ReadonlyMap<string, readonly string[]>;
  /** Whether some path of one or more edges leads from `from` to `to` (a node in a cycle reaches itself). */
  reaches(from: string, to: string): boolean;
  /** Nodes in cycles that no edge leaves and no node ends (every node has a `default` edge into the cycle). */
  cyclesWithoutExit(): string[][];
}

export function buildGraph(workflow: Workflow): WorkflowGraph {
  const successors = new Map<string, string[]>();
  const defaultEdge = new Set<string>();
  for (const node of workflow.nodes) successors.set(node.id, []);
  for (const edge of workflow.edges) {
    successors.get(edge.from)?.push(edge.to);
    if (edge.action === 'default') defaultEdge.add(edge.from);
  }
  const { component, components } = stronglyConnected(successors);
  const cyclic = (c: number): boolean => {
    const members = components[c] as string[];
    if (members.length > 1) return true;
    const only = members[0] as string;
    return (successors.get(only) ?? []).includes(only);
  };

  const reaches = (from: string, to: string): boolean => {
    const a = component.get(from);
    const b = component.get(to);
    if (a === undefined || b === undefined) return false;
    if (a === b) return cyclic(a);
    // Tarjan numbers components in reverse topological order: a path a -> b needs a > b.
    if (a < b) return false;
    const seen = new Set<number>([a]);
    // Any member of from's component is reachable from it, so all of its edges count.
    const stack = [...(components[a] as string[])];
    while (stack.length > 0) {
      for (const next of successors.get(stack.pop() as string) ?? []) {
        const c = component.get(next) as number;
        if (c === b) return true;
        if (c < b || seen.has(c)) continue;
        seen.add(c);
        stack.push(...(components[c] as string[]));
      }
    }
    return false;
  };

  const cyclesWithoutExit = (): string[][] => {
    const stuck: string[][] = [];
    components.forEach((members, c) => {
      if (!cyclic(c)) return;
      const exits = members.some((id) => !defaultEdge.has(id) || (successors.get(id) ?? []).some((next) => component.get(next) !== c));
      if (!exits) stuck.push(members);
    });
    return stuck;
  };

  return { successors, reaches, cyclesWithoutExit };
}

/** Tarjan's algorithm without recursion (a 20k-node chain would overflow the stack). */
function stronglyConnected(successors: ReadonlyMap<string, readonly string[]>): { component: Map<string, number>; components: string[][] } {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const component = new Map<string, number>();
  const components: string[][] = [];
  let counter = 0;
  for (const root of successors.keys()) {
    if (index.has(root)) continue;
    const work: { id: string; next: number }[] = [{ id: root, next: 0 }];
    index.set(root, counter);
    low.set(root, counter);
    counter += 1;
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1] as { id: string; next: number };
      const edges = successors.get(frame.id) ?? [];
      if (frame.next < edges.length) {
        const next = edges[frame.next] as string;
        frame.next += 1;
        if (!index.has(next)) {
          index.set(next, counter);
          low.set(next, counter);
          counter += 1;
          stack.push(next);
          onStack.add(next);
          work.push({ id: next, next: 0 });
        } else if (onStack.has(next)) {
          low.set(frame.id, Math.min(low.get(frame.id) as number, index.get(next) as number));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.id, Math.min(low.get(parent.id) as number, low.get(frame.id) as number));
      if (low.get(frame.id) === index.get(frame.id)) {
        const members: string[] = [];
        let member: string;
        do {
          member = stack.pop() as string;
          onStack.delete(member);
          component.set(member, components.length);
          members.push(member);
        } while (member !== frame.id);
        components.push(members);
      }
    }
  }
  return { component, components };
}
