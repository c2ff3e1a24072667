import dagre from '@dagrejs/dagre';

export interface LayoutNode {
  id: string;
  width: number;
  height: number;
}

export interface LayoutEdge {
  from: string;
  to: string;
  action: string;
  label: string;
}

export interface PlacedNode extends LayoutNode {
  /** Centre of the node. */
  x: number;
  y: number;
}

export interface PlacedEdge extends LayoutEdge {
  points: { x: number; y: number }[];
  labelX: number;
  labelY: number;
}

export interface GraphLayout {
  width: number;
  height: number;
  nodes: Map<string, PlacedNode>;
  edges: PlacedEdge[];
}

/**
 * Places nodes and routes edges with dagre (layered, top to bottom). A multigraph, because two
 * actions of one node may lead to the same node; edge labels get their own space so actions stay readable.
 */
export const layoutGraph = (nodes: readonly LayoutNode[], edges: readonly LayoutEdge[]): GraphLayout => {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'TB', nodesep: 40, ranksep: 56, edgesep: 16, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of nodes) g.setNode(n.id, { width: n.width, height: n.height });
  edges.forEach((e, i) => {
    if (g.hasNode(e.from) && g.hasNode(e.to)) g.setEdge(e.from, e.to, { width: e.label.length * 7 + 8, height: 16, labelpos: 'c' }, String(i));
  });
  dagre.layout(g);
  const placed = new Map<string, PlacedNode>();
  for (const n of nodes) {
    const at = g.node(n.id);
    placed.set(n.id, { ...n, x: at.x, y: at.y });
  }
  const routed: PlacedEdge[] = [];
  edges.forEach((e, i) => {
    const at = g.edge({ v: e.from, w: e.to, name: String(i) });
    if (!at) return;
    const points = ((at.points ?? []) as { x: number; y: number }[]).map((p) => ({ x: p.x, y: p.y }));
    const mid = points[Math.floor(points.length / 2)] ?? { x: 0, y: 0 };
    routed.push({ ...e, points, labelX: at.x ?? mid.x, labelY: at.y ?? mid.y });
  });
  const graph = g.graph();
  return { width: graph.width ?? 0, height: graph.height ?? 0, nodes: placed, edges: routed };
};
