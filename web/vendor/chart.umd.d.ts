// The part of chart.umd.js (Chart.js 4.4.9) that the dashboard (web/js/pages/dashboard.js) uses, for the
// console's type check (tests/web/tsconfig.json): index.html loads the UMD build with a <script> tag, which sets
// window.Chart. Ours, not the package's. Not loaded by the browser.

interface ChartInstance {
  destroy(): void;
}

interface ChartConstructor {
  new (canvas: HTMLCanvasElement, config: { type: string; data: object; options?: object }): ChartInstance;
}

interface Window {
  Chart?: ChartConstructor;
}
