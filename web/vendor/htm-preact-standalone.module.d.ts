// Types of the parts of htm-preact-standalone.module.js (htm 3.1.1 bundling Preact 10) that web/js/lib.js
// re-exports, for the console's type check (tests/web/tsconfig.json). Ours, not the package's: written after
// Preact's and htm's own declarations (preact/src/index.d.ts, preact/hooks/src/index.d.ts, htm/preact), and
// kept to what the console uses. Not loaded by the browser.

export type Key = string | number | undefined;

export interface VNode<P = {}> {
  type: string | ((props: P) => unknown);
  props: P & { children?: ComponentChildren };
  key: Key;
}

export type ComponentChild = VNode<any> | object | string | number | bigint | boolean | null | undefined;
export type ComponentChildren = ComponentChild[] | ComponentChild;

// A ${...} value of an htm template: text, nodes, a prop's value, a component, or a handler. TypeScript does
// not read the template's markup, so it cannot tell which element or component a value goes to: the props a
// template passes are not checked against the component's declared ones, and a handler's parameters are any
// (htm's own declaration types every value any). A handler's body is checked like any other code.
export type TemplateValue =
  | ((...args: any[]) => unknown)
  | string
  | number
  | bigint
  | boolean
  | object
  | null
  | undefined;

// htm's tagged template bound to Preact's h: one root gives a VNode, several an array.
export function html(strings: TemplateStringsArray, ...values: TemplateValue[]): VNode | VNode[];

export function render(vnode: ComponentChild, parent: Element | Document | ShadowRoot | DocumentFragment): void;

export type StateUpdater<S> = (value: S | ((prevState: S) => S)) => void;
export function useState<S>(initialState: S | (() => S)): [S, StateUpdater<S>];
export function useState<S = undefined>(): [S | undefined, StateUpdater<S | undefined>];

type Inputs = ReadonlyArray<unknown>;
type EffectCallback = () => void | (() => void);
export function useEffect(effect: EffectCallback, inputs?: Inputs): void;

export type Ref<T> = { current: T };
export function useRef<T>(initialValue: T): Ref<T>;
export function useRef<T>(initialValue: T | null): Ref<T | null>;
export function useRef<T = undefined>(): Ref<T | undefined>;

export function useMemo<T>(factory: () => T, inputs: Inputs | undefined): T;
export function useCallback<T extends Function>(callback: T, inputs: Inputs): T;
