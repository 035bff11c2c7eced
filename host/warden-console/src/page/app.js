// The console's page. Everything a tool, client or path is called arrives as
// JSON and is set as text (textContent, option text), never parsed as HTML.
'use strict';

// The session's CSRF token: given once in the login redirect's fragment, kept
// in this tab's storage (bound to this port: a page on another port of
// 127.0.0.1 gets the cookie, never this), sent with every API request.
const given = new URLSearchParams(location.hash.slice(1)).get('csrf');
if (given) {
  sessionStorage.setItem('warden-csrf', given);
  history.replaceState(null, '', location.pathname + location.search);
}
const csrf = sessionStorage.getItem('warden-csrf') || '';

function api(url, options = {}) {
  return fetch(url, { ...options, headers: { ...(options.headers || {}), 'x-warden-csrf': csrf } });
}

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === 'class') node.className = value;
    else if (key.startsWith('data-')) node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

function code(text) { return el('code', {}, text); }

function since(ms, now) {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

function status(text, error) {
  const node = document.getElementById('status');
  node.textContent = text;
  node.className = error ? 'status error' : 'status';
}

async function post(url, body) {
  const response = await api(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body || {}),
  });
  if (!response.ok) status(`${response.status}: ${await response.text()}`, true);
  return response.ok;
}

// A client that opens URLs sends the person to /?question=ID: that one is marked.
const wanted = new URLSearchParams(location.search).get('question');

// Each question's card is made once and kept while it is pending: a refresh
// adds and removes cards, and a folder chosen in a card stays chosen.
const cards = new Map();

function questionCard(q) {
  const folder = el('select', { 'data-role': 'folder' }, ...q.folders.map((f, i) => el('option', { value: String(i) }, f)));
  const choose = (decision) => () => {
    // A card that just appeared or moved (one above it went) is not where the person aimed.
    if (Date.now() - Number(card.dataset.movedAt || 0) < MOVED_GRACE_MS) {
      status('The questions moved as you clicked: nothing was answered. Click again.', true);
      return;
    }
    post(`/api/questions/${q.id}`, { decision, folder: Number(folder.value) });
  };
  const buttons = [el('button', { class: 'allow', onclick: choose('once') }, 'Allow once')];
  if (q.offer_session) buttons.push(el('button', { class: 'allow', onclick: choose('session') }, 'Allow for this session'));
  buttons.push(el('button', { class: 'deny', onclick: choose('deny') }, 'Deny'));
  // When it was put on the page: the browser tests measure from the call's start to here.
  // A new card counts as moved: it may appear under a cursor aimed at another.
  const now = String(Date.now());
  const card = el('div', { class: String(q.id) === wanted ? 'question wanted' : 'question', 'data-question-id': String(q.id), 'data-shown-at': now, 'data-moved-at': now },
    el('div', { class: 'what' }, `${q.client} · ${q.tool} asks to ${q.access} `, code(q.path)),
    ...(q.access === 'run'
      // A command a rule asks about: no host path, no folder to choose.
      ? [el('div', { class: 'facts' }, `because ${q.reason}`), ...buttons]
      : [el('div', { class: 'facts' }, 'host path ', code(q.host_path), ` · because ${q.reason}`),
         el('label', {}, `Folder to grant ${q.access} access to: `, folder), ' ', ...buttons]));
  return card;
}

// How long a card's buttons ignore clicks after it moved on the page.
const MOVED_GRACE_MS = 600;

function renderQuestions(questions) {
  const box = document.getElementById('questions');
  document.getElementById('question-count').textContent = String(questions.length);
  const pending = new Set(questions.map((q) => q.id));
  for (const id of cards.keys()) if (!pending.has(id)) cards.delete(id);
  if (!questions.length) {
    box.replaceChildren(el('p', { class: 'empty' }, 'Nothing is waiting for you.'));
    return;
  }
  const before = new Map([...cards].map(([id, card]) => [id, card.isConnected ? card.offsetTop : null]));
  box.replaceChildren(...questions.map((q) => {
    if (!cards.has(q.id)) cards.set(q.id, questionCard(q));
    return cards.get(q.id);
  }));
  for (const [id, card] of cards) {
    const top = before.get(id);
    if (top != null && top !== card.offsetTop) card.dataset.movedAt = String(Date.now());
  }
}

function renderCalls(calls, now) {
  document.getElementById('call-count').textContent = String(calls.length);
  document.querySelector('#calls tbody').replaceChildren(...calls.map((c) => el('tr', { 'data-call-id': String(c.id) },
    el('td', {}, c.client), el('td', {}, c.tool), el('td', {}, code(c.detail)), el('td', {}, since(c.started_at, now)),
    el('td', {}, el('button', { class: 'deny', onclick: () => post(`/api/calls/${c.id}/cancel`) }, 'Cancel')))));
}

function renderGrants(grants) {
  document.querySelector('#grants tbody').replaceChildren(...grants.map((g) => el('tr', {},
    el('td', {}, g.client), el('td', {}, g.access), el('td', {}, code(g.path)), el('td', {}, code(g.host)),
    el('td', {}, el('button', { onclick: () => post(`/api/grants/${g.source}/revoke`, { access: g.access, path: g.path }) }, 'Revoke')))));
}

// One fetch at a time: changes that come meanwhile are fetched once after it.
let refreshing = false;
let stale = false;

async function refresh() {
  if (refreshing) { stale = true; return; }
  refreshing = true;
  try {
    do { stale = false; await refreshOnce(); } while (stale);
  } finally {
    refreshing = false;
  }
}

async function refreshOnce() {
  const response = await api('/api/state');
  if (!response.ok) { status(`${response.status}: ${await response.text()}`, true); return; }
  render(await response.json());
}

function render(state) {
  renderQuestions(state.questions);
  renderCalls(state.calls, state.now);
  renderGrants(state.grants);
  status(`up to date at ${new Date().toLocaleTimeString()}`);
}

async function refreshAudit() {
  const query = new URLSearchParams(new FormData(document.getElementById('filters')));
  const response = await api(`/api/audit?${query}`);
  if (!response.ok) return;
  const view = await response.json();
  document.getElementById('audit-note').textContent = view.note || `${view.total} line(s)${view.total > view.records.length ? `, the newest ${view.records.length} shown` : ''}`;
  document.querySelector('#audit tbody').replaceChildren(...view.records.map((r) => el('tr', {},
    el('td', {}, r.time), el('td', {}, r.client || 'warden'), el('td', {}, r.tool || ''), el('td', {}, r.operation),
    el('td', {}, code(r.path)), el('td', {}, r.decision), el('td', {}, r.scope || ''), el('td', {}, r.via || ''),
    el('td', {}, r.refusal || ''))));
  const box = document.getElementById('suggestions');
  if (!view.suggestions.length) box.replaceChildren(el('p', { class: 'empty' }, 'Nothing was granted for a session yet.'));
  else box.replaceChildren(...view.suggestions.map((s) => el('pre', {}, s.policy)));
}

let auditTimer = null;
function auditSoon() {
  clearTimeout(auditTimer);
  auditTimer = setTimeout(refreshAudit, 150);
}

document.getElementById('filters').addEventListener('input', auditSoon);
// Server-sent events, read by fetch (an EventSource cannot send the token).
// Each event carries the state: shown at once, no request.
async function listen() {
  for (;;) {
    try {
      const response = await api('/api/events');
      if (!response.ok) throw new Error(`${response.status}: ${await response.text()}`);
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const lines = buffer.slice(0, end).split('\n');
          buffer = buffer.slice(end + 2);
          const data = lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, '')).join('\n');
          if (lines.includes('event: changed') && data) { render(JSON.parse(data)); auditSoon(); }
        }
      }
    } catch (e) {
      status(`disconnected from Warden (${e.message}); retrying…`, true);
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
listen();
refresh();
setInterval(() => { refresh(); }, 5000);
