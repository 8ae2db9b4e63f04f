// Reel's web page. One WebSocket at /rpc speaks JSON-RPC 2.0, the same messages and streams as
// reeld's Unix socket (docs/protocol.md). Plain DOM, no framework, no build step.
// Everything that comes from the daemon (names, paths, messages) goes into the page through
// textContent and DOM APIs only, never as HTML: recording names are user data.
'use strict';

// How an upload is sent to POST /import: the file as the raw body (false) or as
// multipart/form-data with one field "file" (true).
const UPLOAD_AS_FORM = false;
const ROOT = '00000000-0000-0000-0000-000000000000';
const PLAYER_INTERVAL = 0.5;   // s between progress pushes; the bar interpolates in between
const RECORDER_INTERVAL = 0.1; // s between level pushes while recording

const $ = (id) => document.getElementById(id);
const clamp = (x, lo, hi) => Math.min(hi, Math.max(lo, x));
const now = () => performance.now() / 1000;

// h('li', {class: 'x', onclick: f, dataset: {id: 1}}, 'text', child) builds an element.
function h(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'class') e.className = v;
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k in e && !k.includes('-')) e[k] = v;
    else e.setAttribute(k, v);
  }
  e.append(...kids.flat().filter((x) => x != null && x !== false).map((x) => (x instanceof Node ? x : String(x))));
  return e;
}

function icon(name) {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  const use = document.createElementNS('http://www.w3.org/2000/svg', 'use');
  use.setAttribute('href', '#i-' + name);
  svg.append(use);
  return svg;
}

function setIcon(button, name) {
  button.querySelector('use').setAttribute('href', '#i-' + name);
}

function iconButton(name, label, onclick, cls) {
  return h('button', { class: 'icon ' + (cls || ''), 'aria-label': label, title: label, onclick }, icon(name));
}

function clock(s, tenths) {
  if (s == null || !isFinite(s)) return '–:––';
  s = Math.max(0, s);
  const whole = Math.floor(s);
  const hh = Math.floor(whole / 3600), mm = Math.floor(whole / 60) % 60, ss = whole % 60;
  const p = (n) => String(n).padStart(2, '0');
  const text = hh ? `${hh}:${p(mm)}:${p(ss)}` : `${mm}:${p(ss)}`;
  return tenths ? `${text}.${Math.floor((s - whole) * 10)}` : text;
}

// The parts of a line, joined by ' · '. A short fixed part (a format, a date, "2 of 4") is
// kept() on one line, so a narrow screen wraps between parts, not inside "2026-11-27".
const kept = (text) => (text ? h('span', { class: 'kept' }, text) : null);
function joined(parts) {
  const out = [];
  for (const part of parts.filter(Boolean)) out.push(...(out.length ? [' · ', part] : [part]));
  return out;
}

const basename = (path) => path.replace(/\/+$/, '').split('/').pop() || path;
// A stream's title on air, else its station, else its URL; a recording's name; a file's name.
const sourceTitle = (src) => (!src ? '' : src.url ? src.title || src.name || src.url : src.name || basename(src.path));
const formatText = (f) => (f ? `${f.codec} ${f.sampleRate / 1000} kHz ${f.channels === 1 ? 'mono' : f.channels === 2 ? 'stereo' : f.channels + ' ch'}` : '');

// ---------------------------------------------------------------------------------------------
// Messages for people

function toast(text, kind) {
  const t = h('div', { class: 'toast ' + (kind || 'error'), role: kind === 'info' ? 'status' : 'alert' }, text);
  $('toasts').append(t);
  while ($('toasts').children.length > 4) $('toasts').firstChild.remove();
  setTimeout(() => t.remove(), kind === 'info' ? 4000 : 8000);
}

function report(err) {
  toast(err && err.message ? err.message : String(err));
}

// ---------------------------------------------------------------------------------------------
// The connection: JSON-RPC 2.0 over a WebSocket, reconnecting with backoff.

class RpcError extends Error {
  constructor(error) {
    super(error.message || 'error ' + error.code);
    this.code = error.code;
    this.reason = error.data && error.data.reason;
  }
}

const rpc = {
  ws: null,
  nextId: 1,
  pending: new Map(),   // id -> {resolve, reject, first}
  streams: new Map(),   // subscription -> handler(method, params)
  attempt: 0,
  onopen: null,

  connect() {
    const ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/rpc');
    this.ws = ws;
    ws.onopen = () => {
      this.attempt = 0;
      setConnected(true);
      if (this.onopen) this.onopen();
    };
    ws.onmessage = (event) => this.receive(event.data);
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      const lost = new Error('the connection to reeld was lost');
      for (const p of this.pending.values()) p.reject(lost);
      this.pending.clear();
      this.streams.clear();
      setConnected(false);
      this.checkLogin();
      // 0.25 s, 0.5 s, 1 s … up to 5 s, with some jitter so that many pages do not come back at once.
      const delay = Math.min(5000, 250 * 2 ** this.attempt++) * (0.8 + 0.4 * Math.random());
      setTimeout(() => this.connect(), delay);
    };
  },

  // A page left open past a restart of reeld with a new password, or a login that expired:
  // the WebSocket only fails, so ask the server what it thinks of this page.
  checkLogin() {
    fetch('/', { method: 'HEAD', cache: 'no-store', credentials: 'same-origin' }).then((r) => {
      if (r.status === 401 || r.status === 403) $('conn').textContent = 'Not logged in: reload the page to log in';
    }, () => {});
  },

  receive(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    for (const m of Array.isArray(message) ? message : [message]) {
      if ('id' in m) {
        const p = this.pending.get(m.id);
        if (!p) continue;
        this.pending.delete(m.id);
        if (m.error) p.reject(new RpcError(m.error));
        else {
          if (p.first) p.first(m.result); // before any push that follows the reply
          p.resolve(m.result);
        }
      } else if (m.params && this.streams.has(m.params.subscription)) {
        this.streams.get(m.params.subscription)(m.method, m.params);
      }
    }
  },

  call(method, params, first) {
    return new Promise((resolve, reject) => {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
        reject(new Error('not connected to reeld; reconnecting'));
        return;
      }
      const id = this.nextId++;
      this.pending.set(id, { resolve, reject, first });
      const request = { jsonrpc: '2.0', id, method };
      if (params) request.params = params;
      this.ws.send(JSON.stringify(request));
    });
  },

  // Resolves to the subscription number; the handler is in place before the first push arrives.
  subscribe(stream, params, handler) {
    return this.call('subscribe', Object.assign({ stream }, params), (r) => this.streams.set(r.subscription, handler))
      .then((r) => r.subscription);
  },

  unsubscribe(subscription) {
    this.streams.delete(subscription);
    return this.call('unsubscribe', { subscription }).catch(() => {});
  },
};

const act = (method, params) => rpc.call(method, params).catch((err) => {
  report(err);
  return null;
});

function setConnected(up) {
  const conn = $('conn');
  conn.hidden = up;
  conn.textContent = 'Reconnecting…';
  document.body.classList.toggle('offline', !up);
}

// ---------------------------------------------------------------------------------------------
// Now playing

const player = {
  state: null,     // the last PlayerState pushed
  offset: null,    // local receive time minus the daemon's timestamp, smallest seen on this connection
  drag: null,      // the position shown while the bar is dragged, or null
  raf: 0,
  lastElapsed: '',
  shown: null, // the entry, position and state the bar last drew (drawProgress)
};

function onPlayer(p) {
  // The daemon's timestamp is its monotonic clock; the least-delayed push tells how it maps
  // onto our clock, so jitter in delivery does not make the bar jump.
  const offset = now() - p.timestamp;
  if (player.offset === null || offset < player.offset) player.offset = offset;
  player.state = p;
  renderPlayer();
  renderSleep(p);
  markCurrent();
  if (!document.body.dataset.ready) {
    document.body.dataset.ready = '1';
    performance.mark('reel-player');
  }
}

function position() {
  const p = player.state;
  if (!p) return 0;
  let pos = p.position;
  if (p.state === 'playing') pos += now() - (p.timestamp + player.offset);
  return p.duration ? clamp(pos, 0, p.duration) : Math.max(0, pos);
}

// The marks of the recording playing or paused: a button each (seeks there) and one to add.
const marks = { id: null, list: [], loading: null };

function loadMarks(id) {
  marks.id = id;
  marks.list = [];
  renderMarks();
  if (!id) return;
  marks.loading = rpc.call('library.get', { item: id }).then((it) => {
    if (marks.id !== id) return;
    marks.list = it.marks || [];
    renderMarks();
  }).catch(() => {});
}

function renderMarks() {
  $('np-marks').hidden = !marks.id;
  $('np-mark-list').replaceChildren(...marks.list.map((m, i) => h('li', {},
    h('button', { class: 'mark', dataset: { index: i, frame: m.frame }, title: 'Go to this mark', onclick: () => act('player.seek', { mark: i }) },
      clock(m.at) + (m.label ? ' ' + m.label : '')))));
}

function renderPlayer() {
  const p = player.state;
  const src = p.source;
  const recordingID = src && src.item && p.state !== 'stopped' ? src.item : null;
  if (recordingID !== marks.id) loadMarks(recordingID);
  $('player').dataset.state = p.state;
  renderReplayGain(p.gain);
  const where = queue.entries.findIndex((e) => e.id === p.entry);
  const entry = where >= 0 ? queue.entries[where] : null;
  // A stream's name and title come with the player's state (they change while it plays).
  $('np-title').textContent = src && src.url ? sourceTitle(src) : entry ? entryTitle(entry) : src ? sourceTitle(src) : 'Nothing playing';
  const sub = [];
  if (src && src.url) {
    if (src.title && src.name) sub.push(src.name);
    const s = p.stream;
    if (s && s.state !== 'playing') sub.push(kept(s.state + (s.reconnects ? ` (reconnected ${s.reconnects}×)` : '')));
  } else if (entry && (entry.artist || entry.album)) sub.push(entrySub(entry));
  else if (src && src.path !== '/' + sourceTitle(src)) sub.push(src.path);
  if (p.format) sub.push(kept(formatText(p.format)));
  if (where >= 0) sub.push(kept(`${where + 1} of ${queue.length}`));
  $('np-sub').replaceChildren(...joined(sub));
  const playing = p.state === 'playing';
  setIcon($('playpause'), playing ? 'pause' : 'play');
  $('playpause').setAttribute('aria-label', playing ? 'Pause' : 'Play');
  $('duration').textContent = (p.durationEstimated ? '~' : '') + clock(p.duration);
  $('progress').setAttribute('aria-valuemax', Math.round(p.duration || 0));
  // The player's error, whoever started what failed (this page or another client); it stays
  // until reeld clears it: a play, a stop, a seek, or player.clearError (the button beside it).
  $('player-error').hidden = !p.error;
  $('player-error-text').textContent = p.error ? p.error.message : '';
  drawProgress();
  if (playing && !player.raf) player.raf = requestAnimationFrame(animate);
}

function animate() {
  player.raf = 0;
  drawProgress();
  if (player.state && player.state.state === 'playing') player.raf = requestAnimationFrame(animate);
}

// While the same entry plays on, the bar never steps back by less than this (s): a push that
// says the audio is a few ms behind the clock (a late device on a loaded machine) holds the bar
// until the audio catches up, instead of moving it back and forth. A seek, a pause or a larger
// correction is drawn as it is; the bar is never more than this ahead of what was heard.
const HOLD_BACK = 0.2;

function drawProgress() {
  const p = player.state;
  let pos = player.drag != null ? player.drag : position();
  const shown = player.shown;
  if (player.drag == null && p && p.state === 'playing' && shown && shown.entry === p.entry &&
      shown.playing && pos < shown.pos && shown.pos - pos < HOLD_BACK) pos = shown.pos;
  player.shown = p ? { entry: p.entry, pos, playing: p.state === 'playing' && player.drag == null } : null;
  const fraction = p && p.duration ? clamp(pos / p.duration, 0, 1) : 0;
  $('progress-fill').style.transform = `scaleX(${fraction})`;
  $('progress-thumb').style.left = fraction * 100 + '%';
  const text = clock(pos);
  if (text !== player.lastElapsed) {
    player.lastElapsed = text;
    $('elapsed').textContent = text;
    $('progress').setAttribute('aria-valuenow', Math.floor(pos));
  }
}

function seekable() {
  const p = player.state;
  return p && p.duration && p.state !== 'stopped';
}

function seekTo(pos) {
  player.drag = pos;
  drawProgress();
  rpc.call('player.seek', { position: pos }).catch(report).finally(() => {
    player.drag = null;
    drawProgress();
  });
}

function setupPlayer() {
  const bar = $('progress');
  let dragging = false;
  const dragAt = (e) => {
    const r = bar.getBoundingClientRect();
    player.drag = clamp((e.clientX - r.left) / r.width, 0, 1) * player.state.duration;
    drawProgress();
  };
  bar.addEventListener('pointerdown', (e) => {
    if (!seekable() || e.button !== 0) return;
    e.preventDefault();
    bar.setPointerCapture(e.pointerId);
    dragging = true;
    bar.classList.add('dragging');
    dragAt(e);
  });
  bar.addEventListener('pointermove', (e) => dragging && dragAt(e));
  bar.addEventListener('pointerup', (e) => {
    if (!dragging) return;
    dragging = false;
    bar.classList.remove('dragging');
    dragAt(e);
    seekTo(Math.min(player.drag, player.state.duration - 0.05));
  });
  bar.addEventListener('pointercancel', () => {
    dragging = false;
    bar.classList.remove('dragging');
    player.drag = null;
    drawProgress();
  });
  bar.addEventListener('keydown', (e) => {
    const step = { ArrowLeft: -5, ArrowRight: 5, PageDown: -30, PageUp: 30 }[e.key];
    if (step && seekable()) {
      e.preventDefault();
      act('player.seek', { offset: step });
    }
  });
  $('playpause').addEventListener('click', () => {
    const p = player.state;
    if (p && p.state === 'playing') act('player.pause');
    else if (p && p.source) act('player.resume');
    else act('player.play');
  });
  $('player-error-clear').addEventListener('click', () => act('player.clearError'));
  $('np-mark').addEventListener('click', async () => {
    const mark = await act('player.mark');
    if (!mark) return;
    toast(`Marked ${clock(mark.at, true)}`, 'info');
    if (marks.id) loadMarks(marks.id);
  });
  $('prev').addEventListener('click', () => act('player.previous'));
  $('next').addEventListener('click', () => act('player.next'));
}

// ---------------------------------------------------------------------------------------------
// Volume

const mixer = { state: null, touched: -Infinity, timer: 0, later: 0 };

function onMixer(m) {
  mixer.state = m;
  const slider = $('volume');
  const none = m.kind === 'none' || m.volume == null;
  slider.disabled = none;
  $('mute').disabled = none;
  // Just after the slider was moved here, the daemon's echoes of older values must not pull it
  // back; the latest value is shown once the hand is off it.
  const wait = mixer.touched + 0.6 - now();
  clearTimeout(mixer.later);
  if (wait > 0) mixer.later = setTimeout(() => onMixer(mixer.state), wait * 1000);
  else if (!none) slider.value = m.volume;
  $('volume-value').textContent = none ? 'no mixer' : slider.value + '%';
  $('mute').setAttribute('aria-pressed', m.muted);
  $('mute').setAttribute('aria-label', m.muted ? 'Unmute' : 'Mute');
  setIcon($('mute'), m.muted ? 'muted' : 'vol');
  $('player').classList.toggle('muted', m.muted);
  const rg = m.replayGain;
  if (rg) {
    $('replaygain-mode').value = rg.mode;
    if (document.activeElement !== $('replaygain-preamp')) $('replaygain-preamp').value = rg.preamp;
    $('replaygain-limit').checked = rg.limit;
  }
}

// The ReplayGain applied to what is audible (PlayerState.gain), beside the settings.
function renderReplayGain(gain) {
  $('replaygain-gain').textContent = gain == null ? '' : (gain >= 0 ? '+' : '−') + Math.abs(gain).toFixed(1) + ' dB';
}

function setupReplayGain() {
  $('replaygain-mode').addEventListener('change', () => act('mixer.setReplayGain', { mode: $('replaygain-mode').value }));
  $('replaygain-preamp').addEventListener('change', () => {
    const preamp = Number($('replaygain-preamp').value);
    if (Number.isFinite(preamp) && preamp >= -15 && preamp <= 15) act('mixer.setReplayGain', { preamp });
  });
  $('replaygain-limit').addEventListener('change', () => act('mixer.setReplayGain', { limit: $('replaygain-limit').checked }));
}

function setupVolume() {
  const slider = $('volume');
  const send = () => {
    mixer.timer = 0;
    act('mixer.setVolume', { volume: Number(slider.value) });
  };
  slider.addEventListener('input', () => {
    mixer.touched = now();
    $('volume-value').textContent = slider.value + '%';
    if (!mixer.timer) mixer.timer = setTimeout(send, 80); // at most ~12 requests a second
  });
  slider.addEventListener('change', () => {
    mixer.touched = now();
    clearTimeout(mixer.timer);
    send();
  });
  $('mute').addEventListener('click', () => mixer.state && act('mixer.setMuted', { muted: !mixer.state.muted }));
}

// ---------------------------------------------------------------------------------------------
// Queue

const MAX_LISTED = 1000;
const queue = { version: null, length: 0, current: null, options: {}, entries: [], listing: false, again: false, dragging: false };

function onQueue(q) {
  queue.current = q.current;
  queue.length = q.length;
  queue.options = q.options;
  renderOptions();
  if (q.version !== queue.version) listQueue();
  else markCurrent();
}

async function listQueue() {
  if (queue.listing) {
    queue.again = true;
    return;
  }
  queue.listing = true;
  try {
    const r = await rpc.call('queue.list', { start: 0, count: MAX_LISTED });
    Object.assign(queue, { version: r.version, length: r.length, current: r.current, entries: r.entries, options: r.options });
    if (!queue.dragging) renderQueue();
  } catch (err) {
    report(err);
  } finally {
    queue.listing = false;
    if (queue.again) {
      queue.again = false;
      listQueue();
    }
  }
}

function renderOptions() {
  for (const name of ['repeat', 'random', 'single', 'consume']) {
    const b = $('opt-' + name);
    const v = queue.options[name];
    b.setAttribute('aria-pressed', v === true || v === 'oneshot');
    b.textContent = name === 'single' && v === 'oneshot' ? 'Single once' : name[0].toUpperCase() + name.slice(1);
  }
}

function renderQueue() {
  const list = $('queue-list');
  list.replaceChildren(...queue.entries.map(queueRow));
  const total = queue.entries.reduce((s, e) => s + (e.duration || 0), 0);
  const more = queue.length > queue.entries.length ? ` (the first ${queue.entries.length} shown)` : '';
  $('queue-summary').textContent = queue.length
    ? `${queue.length} ${queue.length === 1 ? 'entry' : 'entries'}, ${clock(total)}${more}`
    : 'The queue is empty. Add recordings from the library.';
  markCurrent();
  if (player.state) renderPlayer();
}

// A queue entry's title (a music file's Title tag, else the file or recording name) and the line
// under it (artist and album when indexed, else where it lies).
const entryTitle = (entry) => entry.title || sourceTitle(entry.source);
function entrySub(entry) {
  const src = entry.source;
  const tags = [entry.artist, entry.album].filter(Boolean);
  if (tags.length) return tags.join(' · ');
  if (src.url) return src.name || src.url;
  return src.item ? src.path : src.path.replace(/\/[^/]*$/, '') || '/';
}

function queueRow(entry) {
  return h('li', { dataset: { id: entry.id }, class: 'row' + (entry.missing ? ' missing' : '') },
    h('button', { class: 'icon handle', 'aria-label': 'Drag to reorder', title: 'Drag to reorder', onpointerdown: dragEntry }, icon('grip')),
    h('button', { class: 'row-main', onclick: () => act('player.play', { entry: entry.id }) },
      h('span', { class: 'name' }, entryTitle(entry)),
      h('span', { class: 'sub' }, entrySub(entry))),
    h('span', { class: 'meta' }, (entry.durationEstimated ? '~' : '') + clock(entry.duration)),
    iconButton('x', 'Remove from the queue', () => act('queue.remove', { id: entry.id }), 'remove'));
}

function markCurrent() {
  const playing = player.state ? player.state.entry : null;
  const current = playing != null ? playing : queue.current;
  for (const li of $('queue-list').children) {
    const on = Number(li.dataset.id) === current;
    li.classList.toggle('current', on);
    if (on) li.setAttribute('aria-current', 'true');
    else li.removeAttribute('aria-current');
  }
}

// Drag to reorder, with pointer events (mouse, pen and touch alike). The row follows the
// pointer; the others make room; on release one queue.move puts it at its new place.
function dragEntry(e) {
  if (e.button !== 0) return;
  e.preventDefault();
  const handle = e.currentTarget;
  const row = handle.closest('li');
  const rows = [...row.parentNode.children];
  const from = rows.indexOf(row);
  const tops = rows.map((r) => r.getBoundingClientRect());
  const height = tops[from].height;
  const startY = e.clientY;
  let to = from;
  handle.setPointerCapture(e.pointerId);
  row.classList.add('dragging');
  queue.dragging = true;

  const move = (ev) => {
    const dy = ev.clientY - startY;
    row.style.transform = `translateY(${dy}px)`;
    const center = tops[from].top + height / 2 + dy;
    to = 0;
    rows.forEach((r, i) => {
      if (i !== from && center > tops[i].top + tops[i].height / 2) to++;
    });
    rows.forEach((r, i) => {
      if (i === from) return;
      const shift = from < to && i > from && i <= to ? -height : from > to && i >= to && i < from ? height : 0;
      r.style.transform = shift ? `translateY(${shift}px)` : '';
    });
  };
  const end = (ev) => {
    handle.removeEventListener('pointermove', move);
    handle.removeEventListener('pointerup', end);
    handle.removeEventListener('pointercancel', end);
    const id = Number(row.dataset.id);
    queue.dragging = false;
    if (ev.type === 'pointerup' && to !== from) {
      // Show the new order at once; the queue stream's version then brings the daemon's.
      rows.forEach((r) => (r.style.transform = ''));
      row.classList.remove('dragging');
      const [moved] = queue.entries.splice(from, 1);
      queue.entries.splice(to, 0, moved);
      renderQueue();
      act('queue.move', { id, position: to }).then((r) => r || listQueue());
    } else {
      rows.forEach((r) => (r.style.transform = ''));
      row.classList.remove('dragging');
      renderQueue();
    }
  };
  handle.addEventListener('pointermove', move);
  handle.addEventListener('pointerup', end);
  handle.addEventListener('pointercancel', end);
}

function setupQueue() {
  for (const b of document.querySelectorAll('[data-option]')) {
    b.addEventListener('click', () => {
      const name = b.dataset.option;
      const v = queue.options[name];
      // single goes off → on → once → off, the others on ↔ off.
      const next = name === 'single' ? (v === true ? 'oneshot' : v === 'oneshot' ? false : true) : !v;
      act('queue.setOptions', { [name]: next });
    });
  }
  $('queue-clear').addEventListener('click', async () => {
    if (!queue.length) return;
    if (await ask('Clear the queue?', { text: `All ${queue.length} entries go, and playback stops.`, ok: 'Clear', danger: true })) act('queue.clear');
  });
}

// ---------------------------------------------------------------------------------------------
// Library

const lib = { folder: null, items: [], sub: null, token: 0, open: null, recFolderTouched: false };

// Opens a folder ({item: id} or {path}) and follows it with a folder stream, so that it
// updates itself; when it is deleted, its parent opens instead.
async function openFolder(target) {
  const token = ++lib.token;
  if (lib.sub != null) rpc.unsubscribe(lib.sub);
  lib.sub = null;
  try {
    const sub = await rpc.subscribe('folder', target, (method, p) => {
      if (token !== lib.token) return;
      if (method === 'folder.contents') showFolder(p.folder, p.items);
      else if (method === 'folder.deleted') {
        lib.sub = null;
        const gone = p.folder.path || (lib.folder && lib.folder.path) || 'the folder';
        toast(`${gone} was deleted`, 'info');
        openFolder({ item: p.folder.parent || (lib.folder && lib.folder.parent) || ROOT });
      }
    });
    if (token === lib.token) lib.sub = sub;
    else rpc.unsubscribe(sub);
  } catch (err) {
    if (token !== lib.token) return;
    if (err.reason === 'not_found' && target.item !== ROOT) openFolder({ item: ROOT });
    else report(err);
  }
}

function showFolder(folder, items) {
  lib.folder = folder;
  lib.items = items;
  $('folder-new').disabled = !!folder.readOnly;
  $('folder-upload').disabled = !!folder.readOnly;
  document.body.dataset.folder = folder.path;
  renderCrumbs();
  $('items').replaceChildren(...items.map((it) => itemRow(it, false)));
  $('folder-empty').hidden = items.length > 0;
  if (!lib.recFolderTouched) $('rec-folder').value = folder.path;
  const hash = '#library' + (folder.path === '/' ? '' : ':' + encodeURIComponent(folder.path));
  if (location.hash.startsWith('#library') && decodeURIComponent(location.hash) !== decodeURIComponent(hash)) history.replaceState(null, '', hash);
}

function renderCrumbs() {
  const parts = lib.folder.path.split('/').filter(Boolean);
  const crumbs = [h('button', { class: 'crumb', onclick: () => openFolder({ item: ROOT }) }, 'Library')];
  parts.forEach((name, i) => {
    const path = '/' + parts.slice(0, i + 1).join('/');
    crumbs.push(h('span', { class: 'sep', 'aria-hidden': 'true' }, '/'));
    crumbs.push(h('button', { class: 'crumb', onclick: () => openFolder({ path }) }, name));
  });
  crumbs[crumbs.length - 1].setAttribute('aria-current', 'page');
  $('crumbs').replaceChildren(...crumbs);
}

function itemRow(it, withPath) {
  const folder = it.kind === 'folder';
  const meta = folder ? '' : clock(it.duration);
  const sub = withPath ? it.path : folder ? 'folder'
    : it.kind === 'playlist' ? 'playlist'
    : it.kind === 'track' ? joined([it.artist, it.album, kept(formatText(it.format))])
    : joined([kept(formatText(it.format)), kept(it.created.slice(0, 10))]);
  const li = h('li', { class: 'row ' + it.kind, dataset: { id: it.id, name: it.name, kind: it.kind } },
    h('span', { class: 'kind', 'aria-hidden': 'true' }, icon(folder ? 'folder' : 'note')),
    h('button', { class: 'row-main', onclick: () => (folder ? openFolder({ item: it.id }) : play(it)) },
      h('span', { class: 'name' }, it.name), h('span', { class: 'sub' }, sub)),
    h('span', { class: 'meta' }, meta),
    iconButton('plus', 'Add to the queue', () => addToQueue(it), 'add'),
    iconButton('more', 'More actions', () => toggleActions(li, it), 'more-button'));
  if (lib.open === it.id) li.append(actions(it));
  return li;
}

function toggleActions(li, it) {
  const open = li.querySelector('.actions');
  for (const other of document.querySelectorAll('.actions')) other.remove();
  lib.open = open ? null : it.id;
  if (!open) li.append(actions(it));
}

// The music folders' branch (readOnly) is only read: no renaming, moving, deleting, and no
// /audio file (that route serves recordings).
function actions(it) {
  const folder = it.kind === 'folder';
  const writable = !it.readOnly;
  const b = (label, f, cls) => h('button', { class: cls || '', onclick: f }, label);
  return h('div', { class: 'actions' },
    folder ? b('Open', () => openFolder({ item: it.id })) : null,
    b(folder ? 'Play all' : 'Play', () => play(it)),
    b('Play next', () => addToQueue(it, true)),
    folder || !writable ? null : b('Listen here', () => listen(it)),
    folder || !writable ? null : h('a', { class: 'button', href: `/audio/${encodeURIComponent(it.id)}?download=1`, download: '' }, 'Download'),
    writable ? b('Rename', () => rename(it)) : null,
    writable ? b('Move', () => move(it)) : null,
    writable ? b('Delete', () => remove(it), 'danger-text') : null);
}

async function play(it) {
  await act('player.play', { item: it.id });
}

async function addToQueue(it, next) {
  const r = await act('queue.add', next ? { item: it.id, next: true } : { item: it.id });
  if (r) toast(`Added ${r.entries.length === 1 ? entryTitle(r.entries[0]) : r.entries.length + (it.readOnly ? ' tracks' : ' recordings')} to the queue`, 'info');
}

async function rename(it) {
  const name = await ask(`Rename ${it.kind}`, { text: it.path, value: it.name, ok: 'Rename' });
  if (name && name !== it.name) act('library.rename', { item: it.id, name });
}

async function move(it) {
  const to = await ask(`Move ${it.name}`, { text: 'Into the folder (a path such as /Meetings):', value: lib.folder ? lib.folder.path : '/', ok: 'Move' });
  if (to) act('library.move', { item: it.id, toPath: to.startsWith('/') ? to : '/' + to });
}

async function remove(it) {
  const text = it.kind === 'folder' ? `${it.path} and everything in it will be deleted, with the audio files.` : `${it.path} and its audio file will be deleted.`;
  if (await ask(`Delete ${it.name}?`, { text, ok: 'Delete', danger: true })) {
    const r = await act('library.delete', { item: it.id });
    if (r) toast(`Deleted ${r.deleted} ${r.deleted === 1 ? 'item' : 'items'}`, 'info');
  }
}

function listen(it) {
  const audio = $('listen');
  $('listen-title').textContent = it.path;
  $('listen-box').hidden = false;
  audio.src = `/audio/${encodeURIComponent(it.id)}`;
  audio.play().catch(() => {});
}

async function upload(file) {
  const folder = lib.folder ? lib.folder.id : ROOT;
  const name = file.name.replace(/\.[^.]+$/, '') || file.name;
  const url = `/import?folder=${encodeURIComponent(folder)}&name=${encodeURIComponent(name)}`;
  let body = file;
  if (UPLOAD_AS_FORM) {
    body = new FormData();
    body.append('file', file);
  }
  toast(`Uploading ${file.name}…`, 'info');
  const res = await fetch(url, { method: 'POST', body, credentials: 'same-origin' });
  if (!res.ok) {
    let message = `the upload of ${file.name} failed (HTTP ${res.status})`;
    try {
      const text = await res.text();
      try {
        const j = JSON.parse(text);
        message = (j.error && j.error.message) || j.message || message;
      } catch {
        if (text.trim()) message = text.trim().slice(0, 300);
      }
    } catch {}
    throw new Error(message);
  }
  toast(`Uploaded ${file.name}`, 'info');
}

const search = { query: '', cursor: null, token: 0 };

async function searchMore() {
  const token = search.token;
  const params = { query: search.query, limit: 50 };
  if (search.cursor) params.cursor = search.cursor;
  $('search-more').disabled = true;
  try {
    const r = await rpc.call('library.search', params);
    if (token !== search.token) return;
    $('search-results').append(...r.items.map((it) => itemRow(it, true)));
    search.cursor = r.nextCursor;
    const n = $('search-results').children.length;
    $('search-title').textContent = `${n}${r.nextCursor ? '+' : ''} ${n === 1 ? 'result' : 'results'} for “${search.query}”`;
    $('search-more').hidden = !r.nextCursor;
  } catch (err) {
    report(err);
  } finally {
    $('search-more').disabled = false;
  }
}

function setupLibrary() {
  $('search-form').addEventListener('submit', (e) => {
    e.preventDefault();
    search.query = $('search').value;
    search.cursor = null;
    search.token++;
    $('search-results').replaceChildren();
    $('search-view').hidden = false;
    $('browse').hidden = true;
    searchMore();
  });
  $('search-more').addEventListener('click', searchMore);
  $('search-close').addEventListener('click', () => {
    search.token++;
    $('search-view').hidden = true;
    $('browse').hidden = false;
  });
  $('folder-play').addEventListener('click', () => lib.folder && act('player.play', { item: lib.folder.id }));
  $('folder-add').addEventListener('click', () => lib.folder && addToQueue(lib.folder));
  $('folder-new').addEventListener('click', async () => {
    const name = await ask('New folder', { text: `In ${lib.folder.path}`, value: '', ok: 'Create' });
    if (name) act('library.createFolder', { parent: lib.folder.id, name });
  });
  $('folder-upload').addEventListener('click', () => $('upload').click());
  $('upload').addEventListener('change', async () => {
    const files = [...$('upload').files];
    $('upload').value = '';
    for (const f of files) await upload(f).catch(report);
  });
  $('listen-close').addEventListener('click', () => {
    $('listen').pause();
    $('listen').removeAttribute('src');
    $('listen-box').hidden = true;
  });
}

// ---------------------------------------------------------------------------------------------
// Music: the music folders by album and artist, with covers, and a search over their tags.

const music = { view: 'albums', artist: null, album: null, token: 0, query: '', cursor: null, scanning: false, shown: false };

// An album is named by its name and its artist ('' for an album without one).
const coverURL = (a) => '/cover?album=' + encodeURIComponent(a.name) + '&artist=' + encodeURIComponent(a.albumArtist || '');

// An album's art in a tinted square with a note; an album without art keeps the square.
function coverImage(a) {
  const img = h('img', { class: 'cover', alt: '', loading: 'lazy' });
  loadCover(img, coverURL(a));
  return h('span', { class: 'cover-box' }, icon('note'), img);
}

// The image is shown only once it has loaded (CSS: .cover.loaded), so neither a broken image
// (an album without art answers 404) nor the previous album's art is ever drawn over the square.
function loadCover(img, url) {
  img.classList.remove('loaded', 'none');
  img.onload = () => img.classList.add('loaded');
  img.onerror = () => img.classList.add('none');
  img.src = url;
}

function musicShell(view, title) {
  music.view = view;
  $('music-albums').setAttribute('aria-pressed', view === 'albums');
  $('music-artists').setAttribute('aria-pressed', view === 'artists');
  $('music-back-bar').hidden = !title;
  $('music-title').textContent = title || '';
  $('album-head').hidden = view !== 'album';
  $('music-more').hidden = true;
  $('music-empty').hidden = true;
}

function emptyMusic(text) {
  $('music-empty').textContent = text;
  $('music-empty').hidden = false;
}

function noMusicText() {
  return music.scanning ? 'Reading your music folders…' : 'No albums yet. Name your music folders in reeld’s config (music_dirs).';
}

async function showAlbums(artist) {
  const token = ++music.token;
  music.artist = artist || null;
  musicShell(artist ? 'artist' : 'albums', artist || null);
  try {
    const r = await rpc.call('music.albums', artist ? { artist } : {});
    if (token !== music.token) return;
    $('music-list').replaceChildren();
    $('music-grid').replaceChildren(...r.albums.map((a) => h('li', null,
      h('button', { class: 'card', onclick: () => showAlbum(a) },
        coverImage(a),
        h('span', { class: 'name' }, a.name),
        h('span', { class: 'sub' }, [a.albumArtist, a.date && a.date.slice(0, 4)].filter(Boolean).join(' · ') || `${a.tracks} tracks`)))));
    if (!r.albums.length) emptyMusic(artist ? `No albums of ${artist}.` : noMusicText());
  } catch (err) {
    if (token === music.token) report(err);
  }
}

async function showArtists() {
  const token = ++music.token;
  musicShell('artists', null);
  try {
    const r = await rpc.call('music.artists');
    if (token !== music.token) return;
    $('music-grid').replaceChildren();
    $('music-list').replaceChildren(...r.artists.map((a) => h('li', { class: 'row' },
      h('button', { class: 'row-main', onclick: () => showAlbums(a.name) },
        h('span', { class: 'name' }, a.name),
        h('span', { class: 'sub' }, `${a.albums} ${a.albums === 1 ? 'album' : 'albums'} · ${a.tracks} ${a.tracks === 1 ? 'track' : 'tracks'}`)))));
    if (!r.artists.length) emptyMusic(noMusicText());
  } catch (err) {
    if (token === music.token) report(err);
  }
}

function trackRow(t, withAlbum) {
  const sub = joined([t.artist, withAlbum ? t.album : null, kept(formatText(t.format))]);
  return h('li', { class: 'row' + (t.missing ? ' missing' : ''), dataset: { track: t.id } },
    withAlbum ? null : h('span', { class: 'track-no' }, t.track == null ? '' : String(t.track)),
    h('button', { class: 'row-main', onclick: () => playTrack(t) },
      h('span', { class: 'name' }, t.name), h('span', { class: 'sub' }, sub)),
    h('span', { class: 'meta' }, clock(t.duration)),
    iconButton('plus', 'Add to the queue', () => addTracks({ track: t.id }), 'add'));
}

async function showAlbum(a) {
  const token = ++music.token;
  music.album = a;
  musicShell('album', music.artist || 'Albums');
  loadCover($('album-cover'), coverURL(a));
  $('album-name').textContent = a.name;
  $('album-sub').textContent = [a.albumArtist, a.date, `${a.tracks} ${a.tracks === 1 ? 'track' : 'tracks'}`, clock(a.duration)].filter(Boolean).join(' · ');
  $('music-grid').replaceChildren();
  $('music-list').replaceChildren();
  try {
    const r = await rpc.call('music.tracks', albumParams(a));
    if (token !== music.token) return;
    $('music-list').replaceChildren(...r.tracks.map((t) => trackRow(t, false)));
  } catch (err) {
    if (token === music.token) report(err);
  }
}

const albumParams = (a) => ({ album: a.name, albumArtist: a.albumArtist || '' });

async function searchMusic(more) {
  const token = more ? music.token : ++music.token;
  if (!more) {
    musicShell('search', `Results for “${music.query}”`);
    $('music-grid').replaceChildren();
    $('music-list').replaceChildren();
    music.cursor = null;
  }
  const params = { text: music.query, limit: 50 };
  if (music.cursor) params.cursor = music.cursor;
  try {
    const r = await rpc.call('music.search', params);
    if (token !== music.token) return;
    $('music-list').append(...r.tracks.map((t) => trackRow(t, true)));
    music.cursor = r.cursor;
    $('music-more').hidden = !r.cursor;
    if (!$('music-list').children.length) emptyMusic(`Nothing found for “${music.query}”.`);
  } catch (err) {
    if (token === music.token) report(err);
  }
}

// Adds tracks (a track or an album) to the queue; with `play`, right after the current entry,
// and plays the first of them.
async function addTracks(params, play) {
  const r = await act('queue.add', play ? { ...params, next: true } : params);
  if (!r || !r.entries.length) return;
  if (play) await act('player.play', { entry: r.entries[0].id });
  else toast(`Added ${r.entries.length === 1 ? entryTitle(r.entries[0]) : r.entries.length + ' tracks'} to the queue`, 'info');
}

const playTrack = (t) => addTracks({ track: t.id }, true);

// Shows the view again after the index changed (a scan or the disk watcher).
function refreshMusic() {
  if (!music.shown) return;
  if (music.view === 'albums') showAlbums();
  else if (music.view === 'artist') showAlbums(music.artist);
  else if (music.view === 'artists') showArtists();
  else if (music.view === 'album' && music.album) showAlbum(music.album);
}

function onScan(p) {
  const was = music.scanning;
  music.scanning = p.running;
  $('music-scan').textContent = p.running ? `Reading music… ${p.seen} files` : '';
  if (p.running && !was && !$('music-empty').hidden) $('music-empty').textContent = noMusicText();
  if (!p.running && (was || p.indexed || p.removed)) refreshMusic();
}

function showMusicTab() {
  if (!music.shown) {
    music.shown = true;
    showAlbums();
  }
}

function setupMusic() {
  $('music-albums').addEventListener('click', () => showAlbums());
  $('music-artists').addEventListener('click', showArtists);
  $('music-back').addEventListener('click', () => {
    if (music.view === 'album' && music.artist) showAlbums(music.artist);
    else if (music.view === 'artist') showArtists();
    else showAlbums();
  });
  $('music-search-form').addEventListener('submit', (e) => {
    e.preventDefault();
    music.query = $('music-search').value.trim();
    if (music.query) searchMusic(false);
    else showAlbums();
  });
  $('music-more').addEventListener('click', () => searchMusic(true));
  $('album-play').addEventListener('click', () => music.album && addTracks(albumParams(music.album), true));
  $('album-add').addEventListener('click', () => music.album && addTracks(albumParams(music.album)));
}

// ---------------------------------------------------------------------------------------------
// Recorder

const recorder = { state: null };

function dbWidth(db) {
  return db == null ? 0 : clamp((db + 60) / 60, 0, 1);
}

function onRecorder(r) {
  recorder.state = r;
  const recording = r.state === 'recording';
  const armed = r.state === 'armed';
  const inSession = recording || armed;
  $('rec-live').dataset.state = r.state;
  $('rec-state').textContent = recording ? 'Recording' : armed ? 'Armed, listening' : 'Not recording';
  // The running clock is for a recording being made; idle, the last take is named with its
  // length (elapsed is then that take's length), not left as a stopped counter.
  $('rec-elapsed').hidden = !recording;
  $('rec-elapsed').textContent = recording ? clock(r.elapsed, true) : '';
  const last = $('rec-last');
  last.hidden = recording || !r.item;
  if (!recording && r.item) {
    last.querySelector('.name').textContent = r.item.name;
    last.querySelector('.meta').textContent = clock(r.elapsed, true);
    last.querySelector('.sub').textContent = r.item.path;
  }
  $('rec-item').textContent = recording && r.item ? `Into ${r.item.path}` : '';
  $('rec-start').disabled = inSession;
  $('rec-stop').disabled = !inSession;
  $('rec-cancel').disabled = !inSession;
  $('rec-mark').disabled = !recording;
  // A triggered session's level, as a line on the meter.
  $('meter-threshold').hidden = r.threshold == null || !inSession;
  if (r.threshold != null) $('meter-threshold').style.left = dbWidth(r.threshold) * 100 + '%';
  $('meter').dataset.threshold = r.threshold == null ? '' : r.threshold;
  renderSeries(r);
  $('meter-rms').style.clipPath = `inset(0 ${100 - dbWidth(r.rms) * 100}% 0 0)`;
  $('meter-peak').style.left = dbWidth(r.peak) * 100 + '%';
  $('meter').dataset.peak = r.peak == null ? '' : r.peak;
  $('meter').dataset.rms = r.rms == null ? '' : r.rms;
  const db = (v) => (v == null ? '–' : v <= -120 ? 'silence' : v.toFixed(1) + ' dB');
  $('rec-levels').textContent = `peak ${db(r.peak)} · RMS ${db(r.rms)}` + (r.overruns ? ` · ${r.overruns} overruns` : '');
  $('rec-error').hidden = !r.error;
  $('rec-error').textContent = r.error ? r.error.message : '';
  $('tab-recorder').classList.toggle('recording', recording);
}

// The takes of a series (continuous or voice-activated) as they land: the recording's folder
// listed again whenever the count of kept takes or the take being made changes.
function renderSeries(r) {
  const box = $('rec-series');
  if (!r.series) {
    // The last series' takes stay shown until the next session starts.
    if (r.state !== 'idle') box.hidden = true;
    recorder.seriesKey = null;
    return;
  }
  box.hidden = false;
  $('rec-series-summary').textContent = `${r.series.takes} ${r.series.takes === 1 ? 'take' : 'takes'} since ${new Date(r.series.started).toLocaleTimeString()}` +
    (r.disk && r.disk.secondsLeft != null ? ` · ${clock(r.disk.secondsLeft)} of disk left` : '');
  const key = `${r.series.started}|${r.series.takes}|${r.item ? r.item.id : ''}|${r.state}`;
  if (key === recorder.seriesKey || !r.item) return;
  recorder.seriesKey = key;
  const base = r.item.name.replace(/ \d+$/, '');
  const current = r.state === 'recording' ? r.item.id : null;
  rpc.call('library.list', { item: r.item.parent }).then((listing) => {
    if (recorder.seriesKey !== key) return;
    const takes = listing.items
      .filter((it) => it.kind === 'recording' && it.name.startsWith(base + ' ') && /^\d+$/.test(it.name.slice(base.length + 1)) && it.created >= r.series.started.slice(0, 19))
      .sort((a, b) => a.name.localeCompare(b.name));
    $('rec-takes').replaceChildren(...takes.map((it) => h('li', { class: 'row recording', dataset: { id: it.id, name: it.name } },
      h('button', { class: 'row-main', onclick: () => play(it) }, h('span', { class: 'name' }, it.name),
        h('span', { class: 'sub' }, it.id === current ? 'recording…' : it.path)),
      h('span', { class: 'meta' }, it.id === current ? '' : clock(it.duration)))));
  }).catch(() => {});
}

function recordingParams() {
  const params = { folderPath: $('rec-folder').value.trim() || '/' };
  if (!params.folderPath.startsWith('/')) params.folderPath = '/' + params.folderPath;
  const name = $('rec-name').value.trim();
  if (name) params.name = name;
  if ($('rec-format').value) params.format = $('rec-format').value;
  const mode = $('rec-mode').value;
  if (mode === 'continuous') {
    params.segmentSeconds = Math.round(Number($('rec-segment').value) * 60);
    const keep = $('rec-keep').value.trim();
    if (keep) params.keep = { count: Number(keep) };
  } else if (mode === 'vox') {
    params.trigger = { level: Number($('rec-level').value), hold: Number($('rec-hold').value), preroll: Number($('rec-preroll').value) };
  }
  return params;
}

function setupRecorder() {
  $('rec-folder').addEventListener('input', () => (lib.recFolderTouched = true));
  const showMode = () => {
    $('rec-continuous').hidden = $('rec-mode').value !== 'continuous';
    $('rec-vox').hidden = $('rec-mode').value !== 'vox';
  };
  $('rec-mode').addEventListener('change', showMode);
  showMode();
  $('rec-form').addEventListener('submit', (e) => {
    e.preventDefault();
    act('recorder.start', recordingParams()).then((r) => r && ($('rec-name').value = ''));
  });
  $('rec-mark').addEventListener('click', async () => {
    const mark = await act('recorder.mark');
    if (mark) toast(`Marked ${clock(mark.at, true)} in the take`, 'info');
  });
  $('rec-stop').addEventListener('click', async () => {
    const item = await act('recorder.stop');
    if (item) toast(`Saved ${item.path} (${clock(item.duration)})`, 'info');
  });
  $('rec-cancel').addEventListener('click', async () => {
    if (await ask('Cancel the recording?', { text: 'What was recorded so far is thrown away.', ok: 'Throw away', danger: true })) act('recorder.cancel');
  });
}

// ---------------------------------------------------------------------------------------------
// Alarms & schedules, and the sleep timer

// "Mon 07:00" style, in this browser's time zone (the daemon's `next` carries its offset).
function whenText(iso) {
  if (!iso) return 'never';
  return new Date(iso).toLocaleString([], { weekday: 'short', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

function onSchedules(p) {
  $('schedule-list').replaceChildren(...p.schedules.map(scheduleRow));
  $('schedule-empty').hidden = p.schedules.length > 0;
}

function scheduleRow(s) {
  const toggle = h('input', { type: 'checkbox', class: 'sch-enabled', 'aria-label': `${s.name} on` });
  toggle.checked = s.enabled;
  toggle.addEventListener('change', () => act('schedules.update', { id: s.id, enabled: toggle.checked }));
  const next = s.enabled ? (s.next ? `next ${whenText(s.next)}` : 'never again') : 'off';
  const last = s.last ? ` · last: ${s.last.result}, ${s.last.message}` : '';
  return h('li', { class: 'row schedule', dataset: { id: s.id } }, toggle,
    h('div', { class: 'row-main' }, h('div', { class: 'name' }, `${s.when} · ${s.name}`), h('div', { class: 'sub sch-next' }, next + last)),
    h('button', { class: 'danger-text', onclick: () => act('schedules.remove', { id: s.id }) }, 'Delete'));
}

function setupSchedules() {
  $('schedule-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const kind = $('sch-kind').value;
    const minutes = Number($('sch-minutes').value) || 60;
    const fade = Number($('sch-fade').value) || 0;
    const body = {};
    if (kind === 'play') {
      const target = $('sch-target').value.trim();
      body[target.includes('://') ? 'url' : 'file'] = target;
      body.stopAfter = minutes * 60;
      if (fade > 0) body.fadeIn = fade;
    } else if (kind === 'record') {
      body.duration = minutes * 60;
    } else if (fade > 0) {
      body.fadeOut = fade;
    }
    const added = await act('schedules.add', { when: $('sch-when').value.trim(), action: { [kind]: body } });
    if (added) $('sch-when').value = '';
  });
  $('sleep').addEventListener('change', () => {
    const after = Number($('sleep').value);
    act('player.sleep', after ? { after, fadeOut: 30 } : { cancel: true });
  });
}

function renderSleep(p) {
  $('sleep-at').textContent = p.sleepAt ? `stops at ${new Date(p.sleepAt).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}` : '';
  if (!p.sleepAt) $('sleep').value = '';
}

// ---------------------------------------------------------------------------------------------
// Stored playlists: the list, one playlist's entries; open, play, add to the queue, rename,
// delete, save the queue as one. Follows the `playlists` stream.

const playlists = { open: null };

async function listPlaylists() {
  const r = await rpc.call('playlists.list').catch(report);
  if (!r || playlists.open) return;
  $('pl-title').hidden = true;
  $('pl-back').hidden = true;
  $('pl-list').replaceChildren(...r.playlists.map(playlistRow));
  $('pl-empty').hidden = r.playlists.length > 0;
}

function playlistRow(p) {
  const b = (label, f, cls) => h('button', { class: cls || '', onclick: f }, label);
  return h('li', { class: 'row playlist', dataset: { name: p.name } },
    h('div', { class: 'row-main', onclick: () => openPlaylist(p.name) },
      h('div', { class: 'name' }, p.name), h('div', { class: 'sub' }, `${p.length} ${p.length === 1 ? 'entry' : 'entries'}`)),
    b('Open', () => openPlaylist(p.name), 'pl-open'),
    b('Play', () => playPlaylist(p.name), 'pl-play'),
    b('Add', () => loadPlaylist(p.name), 'pl-add'),
    b('Rename', () => renamePlaylist(p.name), 'pl-rename'),
    b('Delete', () => deletePlaylist(p.name), 'danger-text pl-delete'));
}

async function openPlaylist(name) {
  const r = await rpc.call('playlists.get', { name }).catch(report);
  if (!r) return;
  playlists.open = name;
  $('pl-title').textContent = `${name} · ${r.length} ${r.length === 1 ? 'entry' : 'entries'}`;
  $('pl-title').hidden = false;
  $('pl-back').hidden = false;
  $('pl-empty').hidden = true;
  $('pl-list').replaceChildren(...r.entries.map((e) => h('li', { class: 'row pl-entry' + (e.missing ? ' missing' : '') },
    h('div', { class: 'row-main' },
      h('div', { class: 'name' }, e.title || (e.source ? (e.source.url || e.source.path) : e.entry)),
      h('div', { class: 'sub' }, e.missing ? `${e.entry} · missing` : joined([e.artist, e.album]) || e.entry)),
    h('button', { class: 'danger-text pl-remove', onclick: () => act('playlists.remove', { name, positions: [e.position] }) }, 'Remove'))));
}

function closePlaylist() {
  playlists.open = null;
  listPlaylists();
}

async function loadPlaylist(name) {
  const r = await act('playlists.load', { name });
  if (!r) return null;
  const skipped = r.skipped.length ? `; ${r.skipped.length} missing skipped` : '';
  toast(`Added ${r.entries.length} from ${name}${skipped}`, 'info');
  return r;
}

async function playPlaylist(name) {
  const r = await loadPlaylist(name);
  if (r && r.entries.length) act('player.play', { entry: r.entries[0].id });
}

async function renamePlaylist(name) {
  const to = await ask('Rename playlist', { text: name, value: name, ok: 'Rename' });
  if (to && to !== name) act('playlists.rename', { name, to });
}

async function deletePlaylist(name) {
  if (await ask(`Delete ${name}?`, { text: 'The playlist goes; its files and recordings stay.', ok: 'Delete', danger: true })) {
    act('playlists.delete', { name });
  }
}

function onPlaylistChanged(p) {
  if (playlists.open && (p.name === null || p.name === playlists.open)) {
    const name = playlists.open;
    rpc.call('playlists.list').then((r) => {
      if (r.playlists.some((x) => x.name === name)) openPlaylist(name);
      else closePlaylist();
    }).catch(report);
  } else {
    listPlaylists();
  }
}

function setupPlaylists() {
  $('pl-save').addEventListener('click', async () => {
    const name = await ask('Save the queue as', { text: 'A new playlist of the queue\'s entries.', value: '', ok: 'Save' });
    if (!name) return;
    const r = await act('playlists.save', { name });
    if (r) toast(`Saved ${r.name} (${r.length})`, 'info');
  });
  $('pl-back').addEventListener('click', closePlaylist);
}

// ---------------------------------------------------------------------------------------------
// Dialogs, tabs, start

// ask(title, {text, value, ok, danger}) → the text typed (when value is given), true, or null.
function ask(title, { text = '', value = null, ok = 'OK', danger = false } = {}) {
  return new Promise((resolve) => {
    const d = $('dialog');
    const input = $('dlg-input');
    $('dlg-title').textContent = title;
    $('dlg-text').textContent = text;
    input.hidden = value === null;
    input.value = value === null ? '' : value;
    $('dlg-ok').textContent = ok;
    $('dlg-ok').classList.toggle('danger', danger);
    d.returnValue = '';
    d.onclose = () => resolve(d.returnValue !== 'ok' ? null : value === null ? true : input.value.trim() || null);
    d.showModal();
    if (value !== null) input.select();
  });
}

function showTab(name) {
  for (const b of document.querySelectorAll('[data-tab]')) {
    const on = b.dataset.tab === name;
    b.setAttribute('aria-selected', on);
    $(b.dataset.tab).hidden = !on;
  }
  if (name === 'music' && rpc.ws && rpc.ws.readyState === WebSocket.OPEN) showMusicTab();
}

function setupTabs() {
  for (const b of document.querySelectorAll('[data-tab]')) {
    b.addEventListener('click', () => {
      showTab(b.dataset.tab);
      const hash = b.dataset.tab === 'library' && lib.folder && lib.folder.path !== '/' ? '#library:' + encodeURIComponent(lib.folder.path) : '#' + b.dataset.tab;
      history.replaceState(null, '', hash);
    });
  }
  $('dlg-cancel').addEventListener('click', () => $('dialog').close('cancel'));
}

// What the page follows; run again after every reconnection.
function subscribeAll() {
  const fail = (err) => report(err);
  rpc.subscribe('player', { interval: PLAYER_INTERVAL }, (m, p) => onPlayer(p)).catch(fail);
  rpc.subscribe('queue', {}, (m, p) => onQueue(p)).catch(fail);
  rpc.subscribe('mixer', {}, (m, p) => onMixer(p)).catch(fail);
  rpc.subscribe('recorder', { interval: RECORDER_INTERVAL }, (m, p) => onRecorder(p)).catch(fail);
  rpc.subscribe('scan', {}, (m, p) => onScan(p)).catch(fail);
  rpc.subscribe('schedules', {}, (m, p) => onSchedules(p)).catch(fail);
  rpc.subscribe('playlists', {}, (m, p) => onPlaylistChanged(p)).catch(fail);
  if (playlists.open) openPlaylist(playlists.open);
  else listPlaylists();
  if (!$('music').hidden) {
    music.shown = false;
    showMusicTab();
  }
  player.offset = null; // the daemon may have restarted: its clock is another one
  queue.version = null;
  lib.sub = null;
  const hash = decodeURIComponent(location.hash);
  if (lib.folder) openFolder({ item: lib.folder.id });
  else openFolder(hash.startsWith('#library:/') ? { path: hash.slice(9) } : { item: ROOT });
}

// #queue, #music, #library, #library:/Folder/Path, #recorder
function route() {
  const hash = decodeURIComponent(location.hash.slice(1));
  const tab = hash.split(':')[0];
  showTab(['queue', 'music', 'library', 'recorder', 'schedules', 'playlists'].includes(tab) ? tab : 'queue');
  const path = hash.startsWith('library:/') ? hash.slice(8) : null;
  if (path && lib.folder && path !== lib.folder.path && rpc.ws && rpc.ws.readyState === WebSocket.OPEN) openFolder({ path });
}

function start() {
  setupTabs();
  setupPlayer();
  setupVolume();
  setupReplayGain();
  setupQueue();
  setupLibrary();
  setupMusic();
  setupRecorder();
  setupSchedules();
  setupPlaylists();
  route();
  window.addEventListener('hashchange', route);
  rpc.onopen = subscribeAll;
  rpc.connect();
}

start();
