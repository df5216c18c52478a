/**
 * The job page as one HTML string: inline CSS and vanilla JS, nothing fetched but the job's
 * stream and the records API of the server that sent it (index.ts serves it and pins the script
 * and stylesheet by hash in its Content-Security-Policy). Pure: no I/O here.
 *
 * The script follows `GET /jobs/{id}/events` with `fetch` (an EventSource cannot send the bearer
 * token), parses the Server-Sent Events itself, resumes with `Last-Event-ID` after a dropped
 * connection, and renders every text it is sent with `textContent`: a reason or a model's text
 * shows as text, never as markup. Written without template literals: it lives in one.
 */
import { LIMITS } from '../../../contracts/limits';

export const JOB_PAGE_STYLE = `
:root { color-scheme: light dark; --muted: #6b7280; --line: #d1d5db; --ok: #15803d; --warn: #b45309; --bad: #b91c1c; --accent: #2563eb; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1100px; padding: 16px 20px 40px; }
h1 { font-size: 20px; margin: 0 0 4px; word-break: break-all; }
h2 { font-size: 15px; margin: 0 0 8px; }
code, pre { font: 12.5px/1.4 ui-monospace, monospace; }
.muted { color: var(--muted); }
header { border-bottom: 1px solid var(--line); padding-bottom: 10px; margin-bottom: 14px; }
#status { font-size: 15px; margin: 4px 0; }
#status strong { text-transform: uppercase; letter-spacing: .03em; }
#token-form { display: flex; gap: 8px; align-items: center; margin: 8px 0 14px; flex-wrap: wrap; }
main { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 18px; }
main > section, .panel { border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
#side { display: flex; flex-direction: column; gap: 18px; }
@media (max-width: 800px) { main { grid-template-columns: 1fr; } }
#timeline { list-style: none; margin: 0; padding: 0; }
#timeline > li { border-left: 3px solid var(--line); padding: 2px 0 8px 10px; margin-bottom: 6px; }
#timeline > li.working { border-left-color: var(--accent); }
#timeline > li.human { border-left-color: var(--warn); }
.hop-head { font-weight: 600; }
.hop-state { font-weight: 400; color: var(--muted); margin-left: 6px; }
.acks { list-style: none; margin: 2px 0 0; padding: 0; }
.acks li { margin: 2px 0; }
.kind { display: inline-block; font: 600 11.5px/1.6 ui-monospace, monospace; padding: 0 6px; border-radius: 4px; border: 1px solid currentColor; margin-right: 6px; }
.kind.accepted { color: var(--ok); }
.kind.rejected, .kind.refused { color: var(--bad); }
.kind.other { color: var(--warn); }
.money, .who { color: var(--muted); margin-left: 6px; }
#wallet dl { display: grid; grid-template-columns: auto 1fr; gap: 2px 12px; margin: 0 0 8px; }
#wallet dt { color: var(--muted); }
#wallet dd { margin: 0; font-variant-numeric: tabular-nums; }
.bar { display: flex; height: 10px; border-radius: 5px; overflow: hidden; background: #e5e7eb; }
.bar span { display: block; height: 100%; }
.bar .spent { background: var(--accent); }
.bar .reserved { background: #93c5fd; }
#live-text .message { margin-bottom: 10px; }
#live-text pre { white-space: pre-wrap; word-break: break-word; margin: 4px 0 0; padding: 8px; border-radius: 6px; background: rgba(127,127,127,.1); max-height: 320px; overflow: auto; }
#escalation { border-color: var(--warn); border-width: 2px; }
#escalation h2 { color: var(--warn); }
#escalation .caption { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; margin: 10px 0 2px; }
#escalation ul { margin: 2px 0; padding-left: 20px; }
#esc-summary { white-space: pre-wrap; margin: 2px 0; }
#esc-call-digest { word-break: break-all; font-size: 11px; }
#esc-call-args { white-space: pre-wrap; word-break: break-word; max-height: 12em; overflow: auto; margin: 2px 0; font-size: 12px; }
#decide-form { display: grid; grid-template-columns: auto 1fr; gap: 6px 10px; align-items: center; margin-top: 10px; }
#decide-form button { grid-column: 2; justify-self: start; }
#decide-form input, #decide-form select, #decide-form textarea { width: 100%; }
#decide-args { font-family: ui-monospace, monospace; font-size: 12px; }
#decide-result.error { color: var(--bad); }
#decide-result.done { color: var(--ok); }
[hidden] { display: none !important; }
`;

export const JOB_PAGE_SCRIPT = `
'use strict';
(function () {
  const $ = (id) => document.getElementById(id);
  const TOKEN_KEY = 'handrail.api-token';
  const path = location.pathname.replace(/\\/+$/, '');
  const at = path.lastIndexOf('/jobs/');
  const apiBase = path.slice(0, at);
  const rawId = path.slice(at + '/jobs/'.length);
  const jobId = (() => { try { return decodeURIComponent(rawId); } catch (err) { return rawId; } })();
  const eventsUrl = path + '/events';
  const scope = JSON.parse($('scope').textContent || '{}');

  let token = sessionStorage.getItem(TOKEN_KEY) || '';
  let lastId = 0;
  let ended = false;
  let run = 0;
  let controller = null;
  let failures = 0;
  const hops = new Map();
  const messages = new Map();
  let escalation = null;
  let record = null;
  let decideKey = null;
  // Records this page decided through: a later escalation of the job has a record of its own.
  const decided = new Set();

  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = String(text);
    return e;
  };
  const usd = (n) => {
    const v = Number(n) || 0;
    return '$' + (v !== 0 && Math.abs(v) < 0.0001 ? v.toFixed(6) : v.toFixed(4));
  };
  const when = (iso) => {
    const d = new Date(iso);
    return isNaN(d.getTime()) ? String(iso || '') : d.toLocaleTimeString();
  };
  const setConnection = (text) => { $('connection').textContent = text; };
  const auth = () => ({ authorization: 'Bearer ' + token });

  $('job-id').textContent = jobId;
  document.title = jobId + ' · handrail';

  // ---- the hop timeline -------------------------------------------------------------------
  // One row per hop and stage (a refused hop and the human's share their hop's number), in hop order.
  function hopItem(hop, stage) {
    const key = hop + ':' + stage;
    let h = hops.get(key);
    if (!h) {
      const li = el('li');
      li.dataset.hop = String(hop);
      li.dataset.stage = String(stage);
      const head = el('div', 'hop-head');
      const name = el('span', 'hop-name');
      const state = el('span', 'hop-state');
      head.append(name, state);
      const acks = el('ul', 'acks');
      li.append(head, acks);
      name.textContent = 'hop ' + hop + ' · ' + stage;
      if (stage === 'human') li.classList.add('human');
      h = { li, name, state, acks, stage: String(stage) };
      hops.set(key, h);
      const after = [...$('timeline').children].find((c) => Number(c.dataset.hop) > hop);
      $('timeline').insertBefore(li, after || null);
    }
    return h;
  }
  function stepOf(name) {
    const m = /^hop (\\d+): (.*)$/.exec(String(name || ''));
    return m ? { hop: Number(m[1]), stage: m[2] } : null;
  }
  function hopState(hop, stage, working) {
    const h = hopItem(hop, stage);
    h.li.classList.toggle('working', working);
    h.state.textContent = working ? 'working…' : '';
  }
  function addAck(a, decision) {
    if (!a || typeof a.hop !== 'number') return;
    const h = hopItem(a.hop, a.stage);
    const li = el('li');
    li.dataset.hop = String(a.hop);
    li.dataset.stage = String(a.stage);
    li.dataset.ack = String(a.ack);
    if (a.actor) li.dataset.actor = String(a.actor);
    if (decision) li.dataset.decision = 'true';
    const kind = String(a.ack);
    li.append(el('span', 'kind ' + (kind === 'accepted' ? 'accepted' : /^rejected|refused/.test(kind) ? 'rejected' : 'other'), kind));
    li.append(el('span', 'reason', a.reason || ''));
    const money = [];
    if (a.reserved_usd !== undefined) money.push('reserved ' + usd(a.reserved_usd));
    if (a.settled_usd !== undefined) money.push('settled ' + usd(a.settled_usd));
    if (money.length) li.append(el('span', 'money', money.join(' · ')));
    const who = [];
    if (a.actor) who.push((a.stage === 'human' ? 'decided by ' : 'sent by ') + a.actor);
    if (a.in_doubt) who.push('write in doubt');
    if (a.at) who.push(when(a.at));
    if (who.length) li.append(el('span', 'who', who.join(' · ')));
    if (a.at) li.title = String(a.at);
    h.acks.append(li);
  }

  // ---- the wallet and the status ----------------------------------------------------------
  function showState(s) {
    if (!s || typeof s !== 'object') return;
    const status = $('status');
    status.replaceChildren(el('strong', '', s.status), el('span', '', ' · stage ' + s.stage + ' · hop ' + s.hops));
    status.dataset.status = String(s.status);
    const w = $('wallet');
    w.dataset.spent = String(s.spent_usd);
    w.dataset.remaining = String(s.usd_remaining);
    w.dataset.reserved = String(s.reserved_usd);
    $('w-spent').textContent = usd(s.spent_usd);
    $('w-reserved').textContent = usd(s.reserved_usd);
    $('w-remaining').textContent = usd(s.usd_remaining);
    const total = Math.max(1e-12, (Number(s.spent_usd) || 0) + (Number(s.usd_remaining) || 0));
    $('w-bar-spent').style.width = (100 * (Number(s.spent_usd) || 0) / total) + '%';
    $('w-bar-reserved').style.width = (100 * (Number(s.reserved_usd) || 0) / total) + '%';
    const working = Array.isArray(s.working) ? s.working : [];
    $('w-working').textContent = working.length ? working.map((x) => 'hop ' + x.hop + ' ' + x.stage).join(', ') : 'nothing';
    if (s.status !== 'escalated' && s.status !== 'running') hideEscalation();
  }
  function finish(status, reason) {
    ended = true;
    const st = $('status');
    st.dataset.status = String(status);
    st.dataset.ended = 'true';
    const first = st.querySelector('strong');
    if (first) first.textContent = String(status);
    else st.replaceChildren(el('strong', '', status));
    $('ending').textContent = 'finished ' + status + (reason ? ': ' + reason : '');
    for (const h of hops.values()) { h.li.classList.remove('working'); h.state.textContent = ''; }
    hideEscalation();
    setConnection('the job ended; the stream is closed');
  }

  // ---- model text -------------------------------------------------------------------------
  function message(id) {
    let m = messages.get(id);
    if (!m) {
      const found = /\\/hop\\/(\\d+)$/.exec(String(id));
      const hop = found ? Number(found[1]) : NaN;
      const box = el('div', 'message');
      box.dataset.message = String(id);
      const stages = [...hops.values()].filter((h) => h.li.dataset.hop === String(hop) && h.stage !== 'human');
      const stage = stages.length ? stages[stages.length - 1].stage : '';
      const label = el('div', 'muted', isNaN(hop) ? String(id) : 'hop ' + hop + (stage ? ' · ' + stage : ''));
      const pre = el('pre');
      box.append(label, pre);
      $('no-text').hidden = true;
      $('live-text').append(box);
      m = { box, pre, label };
      messages.set(id, m);
    }
    return m;
  }

  // ---- the escalation and its decision ----------------------------------------------------
  function showEscalation(e) {
    if (!e || typeof e !== 'object') return;
    escalation = e;
    record = null;
    decideKey = null;
    $('esc-blocked').textContent = String(e.blocked || '');
    $('esc-since').textContent = when(e.since);
    $('esc-since').title = String(e.since || '');
    $('esc-reasons').replaceChildren(...(e.reasons || []).map((r) => el('li', '', r)));
    // A call the model asked for: shown as text (its arguments are the model's words), decided by its digest.
    const call = e.tool_call && typeof e.tool_call === 'object' ? e.tool_call : null;
    $('esc-call').hidden = !call;
    $('esc-call-name').textContent = call ? String(call.name) : '';
    $('esc-call-digest').textContent = call ? String(call.digest) : '';
    $('esc-call-args').textContent = call ? JSON.stringify(call.args, null, 2) : '';
    // Where the grant allows edits, the call may run with other arguments: the model's, to change.
    $('decide-args').value = call && call.editable ? JSON.stringify(call.args, null, 2) : '';
    const select = $('decide-action');
    select.replaceChildren(...(e.options || []).map((o) => {
      const opt = el('option', '', String(o).replace('_', ' '));
      opt.value = String(o);
      return opt;
    }));
    showTopUp();
    $('decide-result').textContent = '';
    $('decide-result').className = '';
    $('decide-submit').disabled = true;
    $('escalation').hidden = false;
    findRecord(e, 0);
  }
  function hideEscalation() {
    escalation = null;
    record = null;
    $('escalation').hidden = true;
  }
  function showTopUp() {
    const topUp = $('decide-action').value === 'top_up';
    for (const x of document.querySelectorAll('.top-up')) x.hidden = !topUp;
    const onCall = Boolean(escalation && escalation.tool_call) && $('decide-action').value === 'approve';
    for (const x of document.querySelectorAll('.tool-call')) x.hidden = !onCall;
    const editing = onCall && Boolean(escalation.tool_call.editable) && $('decide-verdict').value === 'approve';
    for (const x of document.querySelectorAll('.tool-call-edit')) x.hidden = !editing;
  }
  async function listRecords(ws, p, state) {
    const url = apiBase + '/workspaces/' + encodeURIComponent(ws) + '/projects/' + encodeURIComponent(p) + '/handoffs?state=' + state + '&limit=200';
    const res = await fetch(url, { headers: auth(), cache: 'no-store' });
    if (!res.ok) return [];
    const body = await res.json();
    return Array.isArray(body.handoffs) ? body.handoffs : [];
  }
  async function findRecord(e, tries) {
    if (escalation !== e) return;
    $('esc-record').textContent = 'looking for the escalation record…';
    try {
      for (const state of ['open', 'accepted']) {
        for (const ws of Object.keys(scope)) {
          for (const p of scope[ws]) {
            const found = (await listRecords(ws, p, state)).find(
              (r) => r.job_id === jobId && r.created_by === 'rail' && !decided.has(r.id),
            );
            if (found && escalation === e) return showRecord(found);
          }
        }
      }
    } catch (err) {
      // A failed look-up is tried again below.
    }
    if (escalation !== e) return;
    if (tries >= 40) {
      $('esc-record').textContent = 'no escalation record of this job that you may decide was found';
      return;
    }
    setTimeout(() => findRecord(e, tries + 1), Math.min(3000, 300 + 200 * tries));
  }
  function showRecord(r) {
    record = r;
    const box = $('esc-record');
    box.replaceChildren(el('span', '', 'record ' + r.id + ' (' + r.state + (r.accepted_by ? ' by ' + r.accepted_by : '') + ')'));
    box.dataset.record = String(r.id);
    $('esc-summary').textContent = r.summary || '';
    $('esc-questions').replaceChildren(...(r.open_questions || []).map((q) => el('li', '', q)));
    $('decide-submit').disabled = false;
  }
  // The arguments typed over the model's, when they differ; null (and a message) when they are not a JSON object.
  function editedArgs(call) {
    const text = $('decide-args').value.trim();
    if (text === '' || text === JSON.stringify(call.args, null, 2)) return undefined;
    try {
      const value = JSON.parse(text);
      if (value && typeof value === 'object' && !Array.isArray(value)) return value;
    } catch (err) {
      // Shown below.
    }
    $('decide-result').className = 'error';
    $('decide-result').textContent = 'the arguments must be a JSON object';
    return null;
  }
  function randomKey() {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return 'page-' + [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
  }
  async function decide(ev) {
    ev.preventDefault();
    const out = $('decide-result');
    if (!record) return;
    const form = $('decide-form');
    const action = form.elements.action.value;
    const body = { action };
    const note = form.elements.note.value.trim();
    if (note) body.note = note;
    if (action === 'approve' && escalation && escalation.tool_call) {
      body.tool_call = { digest: String(escalation.tool_call.digest), verdict: form.elements.verdict.value };
      const edited = escalation.tool_call.editable && body.tool_call.verdict === 'approve' ? editedArgs(escalation.tool_call) : undefined;
      if (edited === null) return;
      if (edited !== undefined) body.tool_call.args = edited;
    }
    if (action === 'top_up') {
      if (form.elements.usd.value !== '') body.usd = Number(form.elements.usd.value);
      if (form.elements.revisions.value !== '') body.revisions = Number(form.elements.revisions.value);
    }
    const text = JSON.stringify(body);
    // The same request again (after a network failure) goes with the same key: decided once.
    if (!decideKey || decideKey.body !== text) decideKey = { body: text, key: randomKey() };
    $('decide-submit').disabled = true;
    out.className = '';
    out.textContent = 'sending…';
    try {
      // The stream may move the job on (and clear the escalation) before the answer comes back.
      const target = record;
      const res = await fetch(apiBase + '/handoffs/' + encodeURIComponent(target.id) + '/decide', {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json', 'idempotency-key': decideKey.key },
        body: text,
      });
      const reply = await res.json().catch(() => ({}));
      decideKey = null;
      if (res.ok) {
        decided.add(target.id);
        out.className = 'done';
        out.textContent = 'decided: ' + reply.decision.action + ' by ' + reply.decision.actor + ' (next: ' + reply.decision.next + ')';
      } else {
        out.className = 'error';
        out.textContent = 'refused (' + res.status + ' ' + (reply.error || '') + '): ' + (reply.message || res.statusText);
        $('decide-submit').disabled = false;
      }
    } catch (err) {
      out.className = 'error';
      out.textContent = 'not sent: ' + err.message + ' (send again: the same decision is taken once)';
      $('decide-submit').disabled = false;
    }
  }

  // ---- the stream -------------------------------------------------------------------------
  function handle(e) {
    switch (e.type) {
      case 'STATE_SNAPSHOT': return showState(e.snapshot);
      case 'STEP_STARTED': { const s = stepOf(e.stepName); if (s) hopState(s.hop, s.stage, true); return; }
      case 'STEP_FINISHED': { const s = stepOf(e.stepName); if (s) hopState(s.hop, s.stage, false); return; }
      case 'TEXT_MESSAGE_START': { message(e.messageId).box.classList.add('open'); return; }
      case 'TEXT_MESSAGE_CONTENT': { message(e.messageId).pre.append(document.createTextNode(String(e.delta || ''))); return; }
      case 'TEXT_MESSAGE_END': { message(e.messageId).box.classList.remove('open'); return; }
      case 'RUN_FINISHED': return finish((e.result && e.result.status) || 'finished', e.result && e.result.reason);
      case 'RUN_ERROR': return finish(e.code || 'error', e.message);
      case 'CUSTOM':
        if (e.name === 'handrail.ack') return addAck(e.value, false);
        if (e.name === 'handrail.decision') { addAck(e.value, true); return hideEscalation(); }
        if (e.name === 'handrail.escalation') return showEscalation(e.value);
        if (e.name === 'handrail.stream_lagged' || e.name === 'handrail.stream_error')
          return setConnection(String((e.value && e.value.message) || e.name));
        return;
      default: return;
    }
  }
  function dispatch(id, data) {
    let event;
    try { event = JSON.parse(data); } catch (err) { return; }
    if (id !== undefined && /^\\d+$/.test(id)) {
      const n = Number(id);
      if (n <= lastId) return;
      lastId = n;
      failures = 0;
      $('connection').dataset.lastEventId = String(lastId);
    }
    handle(event);
  }
  async function read(res, mine) {
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    let data = [];
    let id;
    for (;;) {
      const { value, done } = await reader.read();
      if (done || mine !== run) return;
      buffer += value;
      let nl;
      while ((nl = buffer.indexOf('\\n')) >= 0) {
        const line = buffer.slice(0, nl).replace(/\\r$/, '');
        buffer = buffer.slice(nl + 1);
        if (line === '') {
          if (data.length) dispatch(id, data.join('\\n'));
          data = [];
          id = undefined;
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let v = colon < 0 ? '' : line.slice(colon + 1);
        if (v.startsWith(' ')) v = v.slice(1);
        if (field === 'data') data.push(v);
        else if (field === 'id') id = v;
      }
    }
  }
  const pause = (ms) => new Promise((r) => setTimeout(r, ms));
  async function follow() {
    const mine = ++run;
    if (controller) controller.abort();
    while (!ended && mine === run) {
      controller = new AbortController();
      setConnection(lastId ? 'reconnecting after event ' + lastId + '…' : 'connecting…');
      try {
        const headers = { ...auth(), accept: 'text/event-stream' };
        if (lastId > 0) headers['last-event-id'] = String(lastId);
        const res = await fetch(eventsUrl, { headers, signal: controller.signal, cache: 'no-store' });
        if (mine !== run) return;
        if (res.status === 401) return askToken('the token was refused: enter another');
        if (!res.ok) {
          const body = await res.json().catch(() => ({}));
          setConnection('the stream answered ' + res.status + ': ' + (body.message || res.statusText));
          if (res.status < 500) return;
        } else {
          setConnection('live');
          await read(res, mine);
        }
      } catch (err) {
        if (mine !== run) return;
      }
      if (ended || mine !== run) return;
      failures++;
      const wait = Math.min(10000, 250 * 2 ** Math.min(failures, 6));
      setConnection('connection lost after event ' + lastId + '; resuming in ' + Math.round(wait / 100) / 10 + ' s');
      await pause(wait);
    }
  }
  function askToken(note) {
    $('token-form').hidden = false;
    $('token-note').textContent = note || '';
    setConnection('not following: the API token is needed');
    $('token').focus();
  }

  $('token-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    token = $('token').value.trim();
    if (!token) return;
    sessionStorage.setItem(TOKEN_KEY, token);
    $('token').value = '';
    $('token-form').hidden = true;
    follow();
  });
  $('forget-token').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    token = '';
    run++;
    if (controller) controller.abort();
    askToken('token forgotten');
  });
  $('decide-action').addEventListener('change', showTopUp);
  $('decide-verdict').addEventListener('change', showTopUp);
  $('decide-form').addEventListener('submit', decide);

  if (token) { $('token-form').hidden = true; follow(); }
  else askToken('');
})();
`;

/** The page: the same for every job (the script reads the job id from its own path). `scope` is
 * what the server serves, workspace → projects, where the page looks for the job's record. */
export function jobPageHtml(scope: Record<string, readonly string[]>): string {
  // JSON in a script element: `<` escaped, so no value can close the element.
  const scopeJson = JSON.stringify(scope).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>handrail job</title>
<style>${JOB_PAGE_STYLE}</style>
</head>
<body>
<header>
  <h1>Job <code id="job-id" data-testid="job-id"></code></h1>
  <p id="status" data-testid="status" class="muted">not following yet</p>
  <p id="ending" data-testid="ending"></p>
  <p class="muted"><span id="connection" data-testid="connection"></span> <button type="button" id="forget-token">forget token</button></p>
  <form id="token-form" data-testid="token-form" hidden>
    <label>API token <input id="token" data-testid="token" type="password" autocomplete="off" spellcheck="false"></label>
    <button type="submit" data-testid="token-submit">Follow</button>
    <span id="token-note" class="muted"></span>
  </form>
</header>
<main>
  <section>
    <h2>Hops</h2>
    <ol id="timeline" data-testid="timeline"></ol>
  </section>
  <div id="side">
    <section id="escalation" data-testid="escalation" class="panel" hidden>
      <h2>Waiting for a human</h2>
      <p>Blocked before <strong id="esc-blocked"></strong>, since <span id="esc-since"></span></p>
      <p class="caption">Why</p>
      <ul id="esc-reasons" data-testid="escalation-reasons"></ul>
      <div id="esc-call" data-testid="escalation-tool-call" hidden>
        <p class="caption">The tool call it waits on</p>
        <p><strong id="esc-call-name"></strong> <code id="esc-call-digest" class="muted"></code></p>
        <pre id="esc-call-args"></pre>
      </div>
      <p class="caption">The record</p>
      <p id="esc-summary"></p>
      <ul id="esc-questions"></ul>
      <p id="esc-record" class="muted" data-testid="escalation-record"></p>
      <form id="decide-form" data-testid="decide-form">
        <label for="decide-action">Decision</label>
        <select id="decide-action" name="action" data-testid="decide-action"></select>
        <label for="decide-verdict" class="tool-call">The call</label>
        <select id="decide-verdict" name="verdict" class="tool-call" data-testid="decide-verdict">
          <option value="approve">run it</option>
          <option value="deny">deny it (the note tells the model why)</option>
        </select>
        <label for="decide-args" class="tool-call-edit">With arguments</label>
        <textarea id="decide-args" name="args" class="tool-call-edit" rows="4" data-testid="decide-args"></textarea>
        <label for="decide-usd" class="top-up">Add USD</label>
        <input id="decide-usd" name="usd" class="top-up" type="number" min="0" step="any" data-testid="decide-usd">
        <label for="decide-revisions" class="top-up">Add revisions</label>
        <input id="decide-revisions" name="revisions" class="top-up" type="number" min="0" step="1" data-testid="decide-revisions">
        <label for="decide-note">Note</label>
        <input id="decide-note" name="note" maxlength="${LIMITS.decisionNote}" data-testid="decide-note">
        <button type="submit" id="decide-submit" data-testid="decide-submit" disabled>Decide</button>
      </form>
      <p id="decide-result" data-testid="decide-result" role="status"></p>
    </section>
    <section class="panel">
      <h2>Wallet</h2>
      <div id="wallet" data-testid="wallet">
        <dl>
          <dt>spent</dt><dd id="w-spent">–</dd>
          <dt>reserved by working hops</dt><dd id="w-reserved">–</dd>
          <dt>remaining</dt><dd id="w-remaining">–</dd>
          <dt>working</dt><dd id="w-working">–</dd>
        </dl>
        <div class="bar" title="spent, reserved, free"><span id="w-bar-spent" class="spent"></span><span id="w-bar-reserved" class="reserved"></span></div>
      </div>
    </section>
    <section class="panel">
      <h2>Model text</h2>
      <div id="live-text" data-testid="live-text"><p id="no-text" class="muted">No model text yet.</p></div>
    </section>
  </div>
</main>
<script type="application/json" id="scope">${scopeJson}</script>
<script>${JOB_PAGE_SCRIPT}</script>
</body>
</html>
`;
}
