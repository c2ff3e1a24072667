type Child = Node | string | number | false | null | undefined;
type Attrs = Record<string, string | number | boolean | undefined | ((event: Event) => void)>;

/** Creates an element: `on*` attributes become listeners, `false`/`undefined` attributes are left out, text is escaped by the DOM. */
export const h = <K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] => {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  el.append(...kids(children));
  return el;
};

/** An SVG element (they need their namespace to render). */
export const s = (tag: string, attrs: Attrs = {}, ...children: Child[]): SVGElement => {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  setAttrs(el, attrs);
  el.append(...kids(children));
  return el;
};

const kids = (children: Child[]): (Node | string)[] =>
  children.filter((c): c is Node | string | number => c !== false && c !== null && c !== undefined).map((c) => (typeof c === 'number' ? String(c) : c));

const setAttrs = (el: Element, attrs: Attrs): void => {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.slice(2).toLowerCase(), value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
};

export const formatMs = (ms: number | undefined): string =>
  ms === undefined ? '' : ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${ms.toFixed(ms < 10 ? 1 : 0)} ms`;

export const formatUsd = (usd: number): string => `$${usd.toFixed(usd > 0 && usd < 0.01 ? 4 : 2)}`;
