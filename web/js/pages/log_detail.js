// @ts-check
import { html, useEffect, useRef, useState } from '../lib.js';
import { api } from '../api.js';
import { ConfirmButton, ErrorBanner, Loading, Notice, PageHeader, StatusBadge, useLoad } from '../components.js';
import { can, formatMs } from '../util.js';
import { errorText, formatDuration, formatNumber, t, tOr } from '../i18n.js';

const POLL_MS = 1000;
const MAX_CHARS = 2_000_000; // keep the page responsive with huge outputs: the oldest text is dropped

// Tails the fire's output: polls GET /api/v1/logs/{id}/output from the last line read until `end`
// (XXL-JOB's logDetailCat). The admin reads the executor while the fire runs and its archive once the fire
// ended (`source`, `archive`: docs/operations.md, "The fire output archive"). The text goes into a <pre> as a
// text node, never as HTML.
/**
 * The output read so far (its oldest part dropped past MAX_CHARS), whether it has all come, the last poll's
 * error, how many lines were read, where the last page came from and what the archive holds.
 * @typedef {{
 *   content: string, end: boolean, error: import('../i18n.js').ShownError | null, lines: number, source: string,
 *   archive: import('../types.js').LogArchive | null,
 * }} Tail
 */
/**
 * @param {string} id the fire's
 * @param {(ended: boolean) => void} onProgress called after each page
 */
function useTail(id, onProgress) {
  const [state, setState] = useState(/** @type {Tail} */ ({ content: '', end: false, error: null, lines: 0, source: '', archive: null }));
  const [attempt, setAttempt] = useState(0);
  const progress = useRef(onProgress);
  progress.current = onProgress;
  useEffect(() => {
    let live = true;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    let next = 1;
    let content = '';
    setState({ content: '', end: false, error: null, lines: 0, source: '', archive: null });
    const poll = async () => {
      try {
        /** @type {import('../types.js').LogOutput} */
        const r = await api.get(`/api/v1/logs/${id}/output?from_line=${next}`);
        if (!live) return;
        if (r.to_line >= r.from_line) next = r.to_line + 1;
        if (r.content) {
          content += r.content;
          if (content.length > MAX_CHARS) content = `${t('log.dropped')}\n${content.slice(-MAX_CHARS)}`;
        }
        setState({ content, end: r.end, error: null, lines: next - 1, source: r.source || '', archive: r.archive || null });
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

// Where the output shown comes from, and what the admin's archive holds of it (an ended fire).
/** @param {{ source: string, archive: import('../types.js').LogArchive | null }} props */
function ArchiveNote({ source, archive }) {
  if (!archive) return null;
  let text = '';
  if (archive.state === 'archived') {
    text = t(archive.via === 'pull' ? 'log.archive.pull' : 'log.archive.push');
    if (archive.left_out_bytes > 0) {
      text += ` ${t('log.archive.leftOut', { left: formatNumber(archive.left_out_bytes), total: formatNumber(archive.log_bytes) })}`;
    }
  } else if (archive.state === 'pending') {
    text = t('log.archive.pending');
  } else if (archive.state === 'failed') {
    text = t('log.archive.failed', { error: archive.error || '' });
  } else if (source === 'executor') {
    text = t('log.archive.none');
  }
  return text ? html`<p class="muted small" data-testid="archive-note" data-state=${archive.state}>${text}</p>` : null;
}

/** @param {{ label: string, children?: import('../components.js').Children }} props */
function Row({ label, children }) {
  return html`<div class="kv"><dt>${label}</dt><dd>${children}</dd></div>`;
}

/** @param {import('../components.js').PageProps & { id: string }} props */
export function LogDetailPage({ id, user }) {
  /** @type {import('../components.js').Load<import('../types.js').Log>} */
  const log = useLoad(() => api.get(`/api/v1/logs/${id}`), [id]);
  const [notice, setNotice] = useState('');
  const [error, setError] = useState(/** @type {import('../api.js').ApiError | null} */ (null));
  const [follow, setFollow] = useState(true);
  const pre = useRef(/** @type {HTMLPreElement | null} */ (null));
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
      setNotice(t('log.killed'));
      log.reload();
    } catch (ex) {
      setError(ex);
    }
  };
  return html`<section>
    <${PageHeader} title=${t('log.title', { id: l.id })}>
      ${l.status === 'RUNNING' && can(user, l.group_id, 'operate') && html`<${ConfirmButton} label=${t('logs.kill')} confirmLabel=${t('logs.killConfirm')} onConfirm=${kill} />`}
      <a class="button" href=${`#/jobs/${l.job_id}`}>${t('job.title', { id: l.job_id })}</a>
      <a class="button" href=${`#/logs?job=${l.job_id}&group=${l.group_id}`}>${t('log.allFires')}</a>
    </${PageHeader}>
    <${Notice} text=${notice} onClose=${() => setNotice('')} />
    <${ErrorBanner} error=${error} />
    <div class="card">
      <dl class="kvs" data-testid="log-fields">
        <${Row} label=${t('field.status')}><${StatusBadge} status=${l.status} /></${Row}>
        <${Row} label=${t('field.job_id')}>${l.job_id}</${Row}>
        <${Row} label=${t('logs.col.triggerType')}><span title=${l.trigger_type}>${tOr(`enum.trigger.${l.trigger_type}`, l.trigger_type)}</span>${l.retry_count ? ` ${t('log.retriesLeft', { count: l.retry_count, n: formatNumber(l.retry_count) })}` : ''}</${Row}>
        <${Row} label=${t('logs.col.scheduled')}>${formatMs(l.scheduled_ms)}</${Row}>
        <${Row} label=${t('log.sent')}>${formatMs(l.trigger_ms)}</${Row}>
        <${Row} label=${t('log.started')}><span data-testid="started">${l.start_ms ? formatMs(l.start_ms) : ''}${l.start_ms && l.trigger_type === 'CRON' ? ` ${t('log.startLag', { lag: formatDuration(Math.max(0, l.start_ms - l.scheduled_ms)) })}` : ''}</span></${Row}>
        <${Row} label=${t('log.finished')}>${formatMs(l.handle_ms)}</${Row}>
        <${Row} label=${t('log.duration')}><span data-testid="duration">${l.trigger_ms && l.handle_ms ? formatDuration(l.handle_ms - l.trigger_ms) : ''}</span></${Row}>
        <${Row} label=${t('field.address')}><span class="mono">${l.executor_address}</span></${Row}>
        <${Row} label=${t('field.handler')}><span class="mono">${l.executor_handler}</span></${Row}>
        <${Row} label=${t('field.param')}><span class="mono">${l.executor_param}</span></${Row}>
        <${Row} label=${t('log.triggerCode')}>${l.trigger_code ? `${l.trigger_code}` : ''}</${Row}>
        <${Row} label=${t('log.handleCode')}>${l.handle_code ? `${l.handle_code}` : ''}</${Row}>
      </dl>
      ${l.trigger_msg && html`<h3>${t('log.triggerMsg')}</h3><pre class="msg-block">${l.trigger_msg}</pre>`}
      ${l.handle_msg && html`<h3>${t('log.handleMsg')}</h3><pre class="msg-block" data-testid="handle-msg">${l.handle_msg}</pre>`}
      ${l.output != null && html`<h3>${t('log.childOutput')}</h3><pre class="msg-block mono" data-testid="fire-output">${JSON.stringify(l.output, null, 2)}</pre>`}
    </div>
    <div class="card">
      <div class="output-head">
        <h2>${t('log.output')}</h2>
        <span class=${`badge ${tail.end ? 'status-stopped' : 'status-running'}`} data-testid="tail-state" data-state=${tail.end ? 'ended' : 'live'}>${tail.end ? t('log.ended') : t('log.live')}</span>
        ${tail.source && tail.source !== 'none' && html`<span class="badge" data-testid="output-source" data-source=${tail.source}>${t(`log.source.${tail.source}`)}</span>`}
        <span class="muted small">${t('log.lines', { count: tail.lines, n: formatNumber(tail.lines) })}</span>
        <label class="inline"><input type="checkbox" checked=${follow} onChange=${(e) => setFollow(e.target.checked)} /> ${t('log.follow')}</label>
      </div>
      <${ArchiveNote} source=${tail.source} archive=${tail.archive} />
      ${tail.error && html`<div class="banner error">${errorText(tail.error)} <button type="button" onClick=${tail.retry}>${t('common.retry')}</button></div>`}
      <pre class="output" ref=${pre} data-testid="log-output">${tail.content || (tail.end ? t('log.noOutput') : '')}</pre>
    </div>
  </section>`;
}
