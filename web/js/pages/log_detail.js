import { html, useEffect, useRef, useState } from '../lib.js';
import { api } from '../api.js';
import { ConfirmButton, ErrorBanner, Loading, Notice, PageHeader, StatusBadge, useLoad } from '../components.js';
import { formatMs } from '../util.js';

const POLL_MS = 1000;
const MAX_CHARS = 2_000_000; // keep the page responsive with huge outputs: the oldest text is dropped

// Tails the executor's output: polls GET /api/v1/logs/{id}/output from the last line read until `end`
// (XXL-JOB's logDetailCat). The text goes into a <pre> as a text node, never as HTML.
function useTail(id, onProgress) {
  const [state, setState] = useState({ content: '', end: false, error: null, lines: 0 });
  const [attempt, setAttempt] = useState(0);
  const progress = useRef(onProgress);
  progress.current = onProgress;
  useEffect(() => {
    let live = true;
    let timer = null;
    let next = 1;
    let content = '';
    setState({ content: '', end: false, error: null, lines: 0 });
    const poll = async () => {
      try {
        const r = await api.get(`/api/v1/logs/${id}/output?from_line=${next}`);
        if (!live) return;
        if (r.to_line >= r.from_line) next = r.to_line + 1;
        if (r.content) {
          content += r.content;
          if (content.length > MAX_CHARS) content = `[… earlier output dropped …]\n${content.slice(-MAX_CHARS)}`;
        }
        setState({ content, end: r.end, error: null, lines: next - 1 });
        progress.current(r.end);
        // New lines: ask again at once (catching up); none: wait.
        if (!r.end) timer = setTimeout(poll, r.content ? 100 : POLL_MS);
      } catch (error) {
        if (live) setState((s) => ({ ...s, error }));
      }
    };
    poll();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [id, attempt]);
  return { ...state, retry: () => setAttempt((a) => a + 1) };
}

function Row({ label, children }) {
  return html`<div class="kv"><dt>${label}</dt><dd>${children}</dd></div>`;
}

export function LogDetailPage({ id }) {
  const log = useLoad(() => api.get(`/api/v1/logs/${id}`), [id]);
  const [notice, setNotice] = useState('');
  const [error, setError] = useState(null);
  const [follow, setFollow] = useState(true);
  const pre = useRef(null);
  const tail = useTail(id, (ended) => {
    const s = log.data && log.data.status;
    if (ended || s === 'PENDING' || s === 'RUNNING') log.reload();
  });
  useEffect(() => {
    if (follow && pre.current) pre.current.scrollTop = pre.current.scrollHeight;
  }, [tail.content, follow]);

  if (log.error) return html`<${ErrorBanner} error=${log.error} />`;
  if (!log.data) return html`<${Loading} />`;
  const l = log.data;
  const kill = async () => {
    setError(null);
    try {
      await api.post(`/api/v1/logs/${id}/kill`);
      setNotice('Killed.');
      log.reload();
    } catch (ex) {
      setError(ex);
    }
  };
  return html`<section>
    <${PageHeader} title=${`Fire ${l.id}`}>
      ${l.status === 'RUNNING' && html`<${ConfirmButton} label="Kill" onConfirm=${kill} />`}
      <a class="button" href=${`#/jobs/${l.job_id}`}>Job ${l.job_id}</a>
      <a class="button" href=${`#/logs?job=${l.job_id}&group=${l.group_id}`}>All fires of the job</a>
    </${PageHeader}>
    <${Notice} text=${notice} onClose=${() => setNotice('')} />
    <${ErrorBanner} error=${error} />
    <div class="card">
      <dl class="kvs" data-testid="log-fields">
        <${Row} label="Status"><${StatusBadge} status=${l.status} /></${Row}>
        <${Row} label="Job">${l.job_id}</${Row}>
        <${Row} label="Trigger">${l.trigger_type}${l.retry_count ? ` (retries left: ${l.retry_count})` : ''}</${Row}>
        <${Row} label="Scheduled">${formatMs(l.scheduled_ms)}</${Row}>
        <${Row} label="Sent">${formatMs(l.trigger_ms)}</${Row}>
        <${Row} label="Finished">${formatMs(l.handle_ms)}</${Row}>
        <${Row} label="Executor"><span class="mono">${l.executor_address}</span></${Row}>
        <${Row} label="Handler"><span class="mono">${l.executor_handler}</span></${Row}>
        <${Row} label="Parameter"><span class="mono">${l.executor_param}</span></${Row}>
        <${Row} label="Trigger result">${l.trigger_code ? `${l.trigger_code}` : ''}</${Row}>
        <${Row} label="Handle result">${l.handle_code ? `${l.handle_code}` : ''}</${Row}>
      </dl>
      ${l.trigger_msg && html`<h3>Trigger message</h3><pre class="msg-block">${l.trigger_msg}</pre>`}
      ${l.handle_msg && html`<h3>Result message</h3><pre class="msg-block" data-testid="handle-msg">${l.handle_msg}</pre>`}
    </div>
    <div class="card">
      <div class="output-head">
        <h2>Executor output</h2>
        <span class=${`badge ${tail.end ? 'status-stopped' : 'status-running'}`} data-testid="tail-state">${tail.end ? 'ended' : 'live'}</span>
        <span class="muted small">${tail.lines} line(s)</span>
        <label class="inline"><input type="checkbox" checked=${follow} onChange=${(e) => setFollow(e.target.checked)} /> follow</label>
      </div>
      ${tail.error && html`<div class="banner error">${tail.error.message} <button type="button" onClick=${tail.retry}>Retry</button></div>`}
      <pre class="output" ref=${pre} data-testid="log-output">${tail.content || (tail.end ? '(no output)' : '')}</pre>
    </div>
  </section>`;
}
