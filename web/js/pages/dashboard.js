import { html, useEffect, useRef } from '../lib.js';
import { api } from '../api.js';
import { ErrorBanner, Loading, PageHeader, useLoad } from '../components.js';

function Stat({ label, value, testid }) {
  return html`<div class="card stat" data-testid=${testid}><div class="stat-value">${value}</div><div class="stat-label">${label}</div></div>`;
}

// Stacked bars per day: success, failed, running (Chart.js, vendored).
function DayChart({ days }) {
  const canvas = useRef(null);
  useEffect(() => {
    if (!canvas.current || !window.Chart) return undefined;
    const chart = new window.Chart(canvas.current, {
      type: 'bar',
      data: {
        labels: days.map((d) => d.day.slice(5)),
        datasets: [
          { label: 'Success', data: days.map((d) => d.success), backgroundColor: '#16a34a' },
          { label: 'Failed', data: days.map((d) => d.failed), backgroundColor: '#dc2626' },
          { label: 'Running', data: days.map((d) => d.running), backgroundColor: '#2563eb' },
        ],
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } },
        plugins: { legend: { position: 'bottom' } },
      },
    });
    return () => chart.destroy();
  }, [days]);
  return html`<div class="chart-box"><canvas ref=${canvas} aria-label="Fires per day" role="img"></canvas></div>`;
}

export function DashboardPage() {
  const { data, error } = useLoad(() => api.get('/api/v1/dashboard?days=7'), []);
  if (error) return html`<${ErrorBanner} error=${error} />`;
  if (!data) return html`<${Loading} />`;
  const t = data.totals;
  const sum = (k) => data.days.reduce((a, d) => a + d[k], 0);
  return html`<section>
    <${PageHeader} title="Dashboard" />
    <div class="stats">
      <${Stat} label="Jobs" value=${t.jobs} testid="stat-jobs" />
      <${Stat} label="Running jobs (enabled)" value=${t.enabled_jobs} testid="stat-enabled" />
      <${Stat} label="Fires today (UTC)" value=${t.fires_today} testid="stat-fires" />
      <${Stat} label="Executors online" value=${t.executors_online} testid="stat-executors" />
    </div>
    <div class="card">
      <h2>Last 7 days</h2>
      <p class="muted">${sum('success')} succeeded, ${sum('failed')} failed, ${sum('running')} running or pending (days in UTC).</p>
      <${DayChart} days=${data.days} />
    </div>
  </section>`;
}
