// @ts-check
import { html, useEffect, useRef } from '../lib.js';
import { api } from '../api.js';
import { ErrorBanner, Loading, PageHeader, useLoad } from '../components.js';
import { formatDay, formatNumber, language, t } from '../i18n.js';

/** @param {{ label: string, value: number, testid: string }} props */
function Stat({ label, value, testid }) {
  return html`<div class="card stat" data-testid=${testid}><div class="stat-value">${formatNumber(value)}</div><div class="stat-label">${label}</div></div>`;
}

// Stacked bars per day: success, failed, running (Chart.js, vendored). Drawn again when the language
// changes (its legend and day labels are translated).
/** @param {{ days: import('../types.js').DashboardDay[] }} props */
function DayChart({ days }) {
  const canvas = useRef(/** @type {HTMLCanvasElement | null} */ (null));
  const lang = language();
  useEffect(() => {
    if (!canvas.current || !window.Chart) return undefined;
    const chart = new window.Chart(canvas.current, {
      type: 'bar',
      data: {
        labels: days.map((d) => formatDay(d.day)),
        datasets: [
          { label: t('dashboard.chart.success'), data: days.map((d) => d.success), backgroundColor: '#16a34a' },
          { label: t('dashboard.chart.failed'), data: days.map((d) => d.failed), backgroundColor: '#dc2626' },
          { label: t('dashboard.chart.running'), data: days.map((d) => d.running), backgroundColor: '#2563eb' },
        ],
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        locale: lang,
        scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } },
        plugins: { legend: { position: 'bottom' } },
      },
    });
    return () => chart.destroy();
  }, [days, lang]);
  return html`<div class="chart-box"><canvas ref=${canvas} aria-label=${t('dashboard.chart.label')} role="img"></canvas></div>`;
}

export function DashboardPage() {
  /** @type {import('../components.js').Load<import('../types.js').Dashboard>} */
  const { data, error } = useLoad(() => api.get('/api/v1/dashboard?days=7'), []);
  if (error) return html`<${ErrorBanner} error=${error} />`;
  if (!data) return html`<${Loading} />`;
  const totals = data.totals;
  const sum = (/** @type {'success' | 'failed' | 'running'} */ k) => formatNumber(data.days.reduce((a, d) => a + d[k], 0));
  return html`<section>
    <${PageHeader} title=${t('dashboard.title')} />
    <div class="stats">
      <${Stat} label=${t('dashboard.jobs')} value=${totals.jobs} testid="stat-jobs" />
      <${Stat} label=${t('dashboard.enabled')} value=${totals.enabled_jobs} testid="stat-enabled" />
      <${Stat} label=${t('dashboard.firesToday')} value=${totals.fires_today} testid="stat-fires" />
      <${Stat} label=${t('dashboard.executorsOnline')} value=${totals.executors_online} testid="stat-executors" />
    </div>
    <div class="card">
      <h2>${t('dashboard.lastDays', { count: data.days.length, days: formatNumber(data.days.length) })}</h2>
      <p class="muted">${t('dashboard.summary', { success: sum('success'), failed: sum('failed'), running: sum('running') })}</p>
      <${DayChart} days=${data.days} />
    </div>
  </section>`;
}
