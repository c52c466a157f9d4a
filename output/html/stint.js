/* stint.js - the HTML report's behaviour (embedded by embed.cmake): reads
 * the profile from the JSON block #stint-data and builds the summary, the
 * sortable tables, the flame graph (canvas, click to zoom, search, hover)
 * and the callers/callees view.  No library, nothing fetched. */
(function () {
'use strict';
var D = JSON.parse(document.getElementById('stint-data').textContent);
var S = D.method === 'sampling';
var T = D.totals;
var VK = ['elapsed_inclusive', 'elapsed_exclusive', 'application_inclusive', 'application_exclusive'];
var VS = ['EI', 'EE', 'AI', 'AE'];
var VL = ['Elapsed Inclusive', 'Elapsed Exclusive', 'Application Inclusive', 'Application Exclusive'];
function den(k) { return S ? T[0] : (k < 2 ? T[0] : T[2]); }
function pct(x, d) { return d > 0 ? 100 * x / d : 0; }

/* ---- small DOM helpers ---- */
function el(tag, cls, text) {
  var e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}
function add(p) { for (var i = 1; i < arguments.length; i++) if (arguments[i]) p.appendChild(arguments[i]); return p; }

function fmtTime(ns) {
  if (ns < 1e3) return ns.toFixed(0) + ' ns';
  if (ns < 1e6) return (ns / 1e3).toFixed(2) + ' us';
  if (ns < 1e9) return (ns / 1e6).toFixed(2) + ' ms';
  return (ns / 1e9).toFixed(3) + ' s';
}
function fmtInt(x) { return Math.round(x).toLocaleString('en-US'); }
function fmtVal(x) { return S ? fmtInt(x) : fmtTime(x); }
function fmtPct(x) { return x.toFixed(2) + '%'; }

/* ---- function names ---- */
var FN = D.funcs, MODS = D.mods;
function fname(f) { return f === -1 ? '[root]' : f === -2 ? '(other)' : FN[f][0]; }
function fmod(f) { return f < 0 ? '' : MODS[FN[f][1]] || ''; }
var rowByF = {};
D.functions.forEach(function (r) { rowByF[r.f] = r; });

/* ---- summary ---- */
var app = document.getElementById('app');
app.textContent = '';
var hdr = el('header');
var h1 = add(el('h1', null, D.command || 'profile'), el('small', null, S ? 'sampling' : 'instrumentation'));
add(hdr, h1);
var sm = el('div', 'summary');
function item(k, v) { if (v === undefined || v === null || v === '') return; var d = add(el('div'), el('b', null, k)); d.appendChild(document.createTextNode(v)); d.title = k + ' ' + v; sm.appendChild(d); }
item('Method', S ? 'sampling' : 'instrumentation');
item('Recorded', D.recorded);
if (D.duration_ns !== undefined) item(S ? 'Duration' : 'Wall time', fmtTime(D.duration_ns));
item('Exit status', D.exit_status);
if (D.nprocs !== undefined) item('Processes / threads', D.nprocs + ' / ' + D.nthreads);
if (S) {
  item('Samples', fmtInt(D.samples) + (D.lost_samples ? ' (' + fmtInt(D.lost_samples) + ' lost)' : ''));
  item('Event', D.event + (D.frequency_hz ? ' at ' + D.frequency_hz + ' Hz' : ''));
  item('Unwinder', D.unwinding === 'dwarf' ? 'DWARF CFI' : D.unwinding === 'fp' ? 'frame pointers' : D.unwinding);
  item('Stacks cut short', fmtInt(D.cut_stacks));
} else {
  item('Session EI', fmtTime(T[0]));
  item('Session AI', fmtTime(T[2]));
  item('Events', fmtInt(D.events) + (D.lost_events ? ' (' + fmtInt(D.lost_events) + ' lost)' : ''));
  item('OS event detector', D.os_event_detector);
  if (D.compensation) item('Compensation', D.compensation.enabled ? D.compensation.cost_per_event_ns.toFixed(1) + ' ns/event, ' + fmtTime(D.compensation.subtracted_ns) + ' subtracted' : 'off');
}
item('Filter', D.filter);
add(hdr, sm);
if (D.damage) add(hdr, el('div', 'warn', 'Damaged file: ' + D.damage + '; values cover what precedes the damage'));
var TR = D.tree;
var pruneNote = TR.folded_nodes ? 'Flame graph: ' + fmtInt(TR.shown_nodes - TR.other_nodes) + ' of ' + fmtInt(TR.source_nodes) +
  ' call paths shown; ' + fmtInt(TR.folded_nodes) + ' smaller paths (each below ' + fmtVal(TR.threshold) + ', ' +
  pct(TR.threshold, T[0]).toPrecision(2) + '% of the total) are folded into ' + fmtInt(TR.other_nodes) + ' "(other)" frames.' : '';
if (pruneNote) add(hdr, el('div', 'note', pruneNote));
app.appendChild(hdr);

/* ---- tabs ---- */
var nav = el('nav'), main = el('main'), panels = {}, onShow = {};
var TABS = [['functions', 'Functions'], ['modules', 'Modules'], ['threads', 'Threads'], ['processes', 'Processes'],
  ['flame', 'Flame graph'], ['callers', 'Callers / callees']];
TABS.forEach(function (t) {
  var b = el('button', null, t[1]);
  b.dataset.tab = t[0];
  b.onclick = function () { show(t[0]); };
  nav.appendChild(b);
  var p = el('section', 'panel');
  p.id = 'panel-' + t[0];
  panels[t[0]] = p;
  main.appendChild(p);
});
add(app, nav, main);
var current = null;
function show(name) {
  current = name;
  Array.prototype.forEach.call(nav.children, function (b) { b.classList.toggle('on', b.dataset.tab === name); });
  for (var k in panels) panels[k].classList.toggle('on', k === name);
  if (onShow[name]) onShow[name]();
}

/* ---- tables ---- */
function valueCols(perCall, calls) {
  var c = [];
  if (calls) c.push({ k: 'calls', l: 'Calls', t: 'int', h: 'number of calls' });
  if (S) {
    c.push({ k: 'inclusive_samples', l: 'Inclusive', t: 'int', h: 'inclusive samples', g: 1 });
    c.push({ k: 'inclusive_pct', l: 'Incl %', t: 'pct', h: 'inclusive samples, % of all samples' });
    c.push({ k: 'exclusive_samples', l: 'Exclusive', t: 'int', h: 'exclusive samples', g: 1 });
    c.push({ k: 'exclusive_pct', l: 'Excl %', t: 'pct', h: 'exclusive samples, % of all samples' });
    return c;
  }
  for (var k = 0; k < 4; k++) {
    c.push({ k: VK[k], l: VS[k], t: 'time', h: VL[k], g: 1 });
    c.push({ k: VK[k] + '_pct', l: VS[k] + ' %', t: 'pct', h: VL[k] + ', % of the session ' + (k < 2 ? 'EI' : 'AI') });
  }
  if (perCall) for (k = 0; k < 4; k++) {
    c.push({ k: VK[k] + '_avg', l: VS[k] + ' avg', t: 'time', h: VL[k] + ', average per call', g: 1 });
    c.push({ k: VK[k] + '_min', l: VS[k] + ' min', t: 'time', h: VL[k] + ', minimum per call' });
    c.push({ k: VK[k] + '_max', l: VS[k] + ' max', t: 'time', h: VL[k] + ', maximum per call' });
  }
  return c;
}
function cell(col, r) {
  var v = col.get ? col.get(r) : r[col.k];
  var td;
  if (col.t === 'str') { td = el('td', col.cls || 'name', v); td.title = v; return td; }
  td = el('td', col.t === 'pct' ? 'p' : 'n');
  td.dataset.v = v;
  if (col.t === 'pct') {
    var bar = el('span', 'pbar');
    bar.style.width = Math.max(0, Math.min(100, v)) * 0.4 + 'px';
    add(td, bar, document.createTextNode(fmtPct(v)));
  } else if (col.t === 'time') { td.textContent = fmtTime(v); td.title = fmtInt(v) + ' ns'; }
  else td.textContent = fmtInt(v);
  return td;
}
/* A sortable table of rows: header click sorts, filter box, row limit. */
function makeTable(host, id, rows, cols, defKey, onRow) {
  var st = { key: defKey, desc: true, q: '', limit: 500 };
  var bar = el('div', 'bar'), q = el('input');
  q.type = 'search'; q.placeholder = 'filter by name'; q.id = id + '-filter';
  var count = el('span', 'note'), more = el('button', 'btn', 'show all');
  add(bar, q, count, more);
  var wrap = el('div', 'tw'), tbl = el('table'), thead = el('thead'), tbody = el('tbody'), hr = el('tr');
  tbl.id = id;
  cols.forEach(function (c) {
    var th = el('th', (c.t === 'str' ? '' : 'n') + (c.g ? ' grp' : ''), c.l);
    th.title = (c.h || c.l) + ' (click to sort)';
    th.dataset.key = c.k;
    th.onclick = function () {
      if (st.key === c.k) st.desc = !st.desc; else { st.key = c.k; st.desc = c.t !== 'str'; }
      draw();
    };
    hr.appendChild(th);
  });
  add(host, bar, add(wrap, add(tbl, add(thead, hr), tbody)));
  q.oninput = function () { st.q = q.value.toLowerCase(); draw(); };
  more.onclick = function () { st.limit = Infinity; draw(); };
  function draw() {
    var c = cols.filter(function (x) { return x.k === st.key; })[0];
    var get = c.get || function (r) { return r[c.k]; };
    var rs = rows.filter(function (r) { return !st.q || String(cols[0].get ? cols[0].get(r) : r[cols[0].k]).toLowerCase().indexOf(st.q) >= 0; });
    rs.sort(function (a, b) {
      var x = get(a), y = get(b), d = c.t === 'str' ? String(x).localeCompare(String(y)) : x - y;
      return st.desc ? -d : d;
    });
    Array.prototype.forEach.call(hr.children, function (th) {
      var on = th.dataset.key === st.key;
      th.classList.toggle('sorted', on);
      th.textContent = cols.filter(function (x) { return x.k === th.dataset.key; })[0].l + (on ? (st.desc ? ' \u25be' : ' \u25b4') : '');
    });
    tbody.textContent = '';
    var n = Math.min(rs.length, st.limit);
    var frag = document.createDocumentFragment();
    for (var i = 0; i < n; i++) {
      var r = rs[i], tr = el('tr');
      cols.forEach(function (col) { tr.appendChild(cell(col, r)); });
      if (onRow) { tr.className = 'click'; tr.onclick = onRow.bind(null, r); tr.title = 'click: callers and callees'; }
      frag.appendChild(tr);
    }
    tbody.appendChild(frag);
    count.textContent = n < rs.length ? n + ' of ' + rs.length + ' rows' : rs.length + (rs.length === 1 ? ' row' : ' rows');
    more.style.display = n < rs.length ? '' : 'none';
  }
  draw();
}
var nameCol = { k: 'name', l: 'Function', t: 'str', h: 'function name' };
var modCol = { k: 'module', l: 'Module', t: 'str', cls: 'src', h: 'module (ELF file)' };
var srcCol = { k: 'file', l: 'Source', t: 'str', cls: 'src', h: 'source file and line', get: function (r) { return r.file ? r.file + ':' + r.line : ''; } };
var defKey = S ? 'exclusive_samples' : 'elapsed_exclusive';
makeTable(panels.functions, 'functions-table', D.functions, [nameCol, modCol].concat(valueCols(true, !S), [srcCol]), defKey,
  function (r) { select(r.f); show('callers'); });
makeTable(panels.modules, 'modules-table', D.modules, [{ k: 'name', l: 'Module', t: 'str' }].concat(valueCols(false, !S)),
  S ? 'exclusive_samples' : 'elapsed_inclusive');
makeTable(panels.threads, 'threads-table', D.threads, [{ k: 'name', l: 'Thread', t: 'str' }, { k: 'tid', l: 'TID', t: 'int' },
  { k: 'pid', l: 'PID', t: 'int' }].concat(valueCols(false, false)), S ? 'inclusive_samples' : 'elapsed_inclusive');
makeTable(panels.processes, 'processes-table', D.processes, [{ k: 'command', l: 'Command', t: 'str' }, { k: 'pid', l: 'PID', t: 'int' }]
  .concat(valueCols(false, false)), S ? 'inclusive_samples' : 'elapsed_inclusive');

/* ---- the tree ---- */
var N = TR.fn.length, TF = TR.fn, TP = TR.parent, TV = TR.v, TC = TR.calls;
var folded = {};
TR.folded.forEach(function (p) { folded[p[0]] = p[1]; });
var kidStart = new Int32Array(N + 1), kids = new Int32Array(Math.max(N - 1, 1)), depth = new Int32Array(N);
(function () {
  var i, cnt = new Int32Array(N);
  for (i = 1; i < N; i++) { cnt[TP[i]]++; depth[i] = depth[TP[i]] + 1; }
  for (i = 0; i < N; i++) kidStart[i + 1] = kidStart[i] + cnt[i];
  var fill = kidStart.slice(0, N);
  for (i = 1; i < N; i++) kids[fill[TP[i]]++] = i;
})();
var metric = 0;
function sortKids() {
  var m = TV[metric];
  for (var i = 0; i < N; i++) {
    var a = kidStart[i], b = kidStart[i + 1];
    if (b - a > 1) {
      var sub = Array.prototype.slice.call(kids, a, b).sort(function (x, y) {
        return (TF[x] === -2) - (TF[y] === -2) || m[y] - m[x];
      });
      for (var j = 0; j < sub.length; j++) kids[a + j] = sub[j];
    }
  }
}
sortKids();

/* ---- flame graph (an icicle: callers above their callees) ---- */
var fp = panels.flame;
var fbar = el('div', 'bar');
var reset = el('button', 'btn', 'Reset zoom'); reset.id = 'flame-reset';
var search = el('input'); search.type = 'search'; search.id = 'flame-search'; search.placeholder = 'search functions';
var smatch = el('span', 'match'); smatch.id = 'flame-match';
var msel = null;
add(fbar, reset, search, smatch);
if (!S) {
  msel = el('select');
  msel.id = 'flame-metric';
  [['0', 'width: Elapsed Inclusive'], ['2', 'width: Application Inclusive']].forEach(function (o) { var op = el('option', null, o[1]); op.value = o[0]; msel.appendChild(op); });
  fbar.appendChild(msel);
}
var bfBtn = el('button', 'btn', 'Callers / callees of the zoomed function'); bfBtn.style.display = 'none';
fbar.appendChild(bfBtn);
var crumb = el('div', 'note'); crumb.id = 'flame-zoom';
var fnote = el('div', 'note', 'Click a frame to zoom in, a frame above the zoomed one (or Reset, or Esc) to zoom out; hover for values.' +
  (TR.folded_nodes ? ' "(other)" frames stand for call paths folded to keep the page fast (see the note at the top).' : ''));
var fwrap = el('div', 'flame-wrap'), canvas = el('canvas'); canvas.id = 'flame-canvas';
var tip = el('div'); tip.id = 'tip';
add(fp, fbar, crumb, add(fwrap, canvas), fnote);
document.body.appendChild(tip);
var ROWH = 18, MAXROWS = 1400, zoom = 0, rects = [], matches = null, hoverNode = -1;
function val(i) { return TV[metric][i]; }
function hue(s) { var h = 0; for (var i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0; return h >>> 0; }
function color(i) {
  if (matches && matches[i]) return '#c05ee0';
  if (i === 0) return '#b9c2d0';
  if (TF[i] === -2) return '#d4d7dc';
  var h = hue(fname(TF[i]));
  return 'hsl(' + (h % 46 + 4) + ',' + (h % 23 + 70) + '%,' + ((h >> 5) % 14 + 56) + '%)';
}
function label(i) { return i === 0 ? 'all' : TF[i] === -2 ? '(other: ' + fmtInt(folded[i] || 0) + ' call paths)' : fname(TF[i]); }
function renderFlame() {
  var W = Math.max(300, fwrap.clientWidth - 2);
  var chain = [];
  for (var a = TP[zoom]; a >= 0; a = TP[a]) chain.unshift(a);
  var hiddenAnc = 0;
  if (chain.length > 24) { hiddenAnc = chain.length - 23; chain = [chain[0]].concat(chain.slice(-22)); }
  rects = [];
  var zv = val(zoom) || 1, row0 = chain.length, maxRow = row0, cut = false;
  var stack = [[zoom, 0, row0]];
  while (stack.length) {
    var s = stack.pop(), i = s[0], x = s[1], r = s[2];
    var w = i === zoom ? W : val(i) / zv * W;
    if (w < 0.4) continue;
    if (r >= MAXROWS) { cut = true; continue; }
    rects.push([i, x, r, w]);
    if (r > maxRow) maxRow = r;
    var cx = x;
    var sub = [];
    for (var k = kidStart[i]; k < kidStart[i + 1]; k++) { var c = kids[k]; sub.push([c, cx, r + 1]); cx += val(c) / zv * W; }
    for (k = sub.length - 1; k >= 0; k--) stack.push(sub[k]);
  }
  chain.forEach(function (n, j) { rects.push([n, 0, j, W, true]); });
  var H = (maxRow + 1) * ROWH + 2, dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
  canvas.style.width = W + 'px'; canvas.style.height = H + 'px';
  var g = canvas.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, W, H);
  g.font = '11px ui-monospace, "DejaVu Sans Mono", monospace';
  g.textBaseline = 'middle';
  var cw = g.measureText('m').width || 6.6;
  rects.forEach(function (q) {
    var i = q[0], x = q[1], y = q[2] * ROWH, w = q[3];
    g.globalAlpha = q[4] ? 0.55 : 1;
    g.fillStyle = color(i);
    g.fillRect(x, y, Math.max(w - 1, 0.4), ROWH - 1);
    if (w > 3 * cw) {
      var t = label(i), room = Math.floor((w - 6) / cw);
      if (t.length > room) t = t.slice(0, Math.max(room - 1, 1)) + '\u2026';
      g.fillStyle = '#1d2330';
      g.fillText(t, x + 3, y + ROWH / 2);
    }
  });
  g.globalAlpha = 1;
  crumb.textContent = zoom ? 'Zoomed to ' + label(zoom) + ' (' + fmtPct(pct(val(zoom), val(0))) + ' of the total)' +
    (hiddenAnc ? '; ' + hiddenAnc + ' callers above it not drawn' : '') : 'Whole profile';
  if (cut) crumb.textContent += '; frames deeper than ' + MAXROWS + ' levels are not drawn: zoom in to see them';
  bfBtn.style.display = zoom && TF[zoom] >= 0 ? '' : 'none';
}
function hit(ev) {
  var b = canvas.getBoundingClientRect(), x = ev.clientX - b.left, r = Math.floor((ev.clientY - b.top) / ROWH);
  for (var j = 0; j < rects.length; j++) { var q = rects[j]; if (q[2] === r && x >= q[1] && x < q[1] + q[3]) return q[0]; }
  return -1;
}
function nodeTip(i) {
  var t = el('div'), f = TF[i];
  add(t, el('div', 't', i === 0 ? 'all (' + (D.command || 'the selection') + ')' : label(i)));
  if (f >= 0) add(t, el('div', null, fmod(f) + (FN[f][2] ? '  ' + FN[f][2] + ':' + FN[f][3] : '')));
  if (f === -2) add(t, el('div', null, fmtInt(folded[i] || 0) + ' call paths below ' + fmtVal(TR.threshold) + ' each, summed'));
  var tb = el('table');
  function line(k, v) { add(tb, add(el('tr'), el('td', null, k), el('td', null, v))); }
  if (S) {
    line('Inclusive samples', fmtInt(TV[0][i]) + '  (' + fmtPct(pct(TV[0][i], T[0])) + ')');
    line('Exclusive samples', fmtInt(TV[1][i]) + '  (' + fmtPct(pct(TV[1][i], T[0])) + ')');
  } else {
    if (i) line('Calls', fmtInt(TC[i]));
    for (var k = 0; k < 4; k++) line(VL[k], fmtTime(TV[k][i]) + '  (' + fmtPct(pct(TV[k][i], den(k))) + ')');
  }
  if (zoom && i !== zoom) line('of the zoomed frame', fmtPct(pct(val(i), val(zoom))));
  add(t, tb);
  return t;
}
canvas.onmousemove = function (ev) {
  var i = hit(ev);
  hoverNode = i;
  if (i < 0) { tip.style.display = 'none'; canvas.style.cursor = ''; return; }
  canvas.style.cursor = 'pointer';
  tip.textContent = '';
  tip.appendChild(nodeTip(i));
  tip.style.display = 'block';
  var x = ev.clientX + 14, y = ev.clientY + 14;
  if (x + tip.offsetWidth > window.innerWidth - 4) x = Math.max(4, ev.clientX - tip.offsetWidth - 10);
  if (y + tip.offsetHeight > window.innerHeight - 4) y = Math.max(4, ev.clientY - tip.offsetHeight - 10);
  tip.style.left = x + 'px'; tip.style.top = y + 'px';
};
canvas.onmouseleave = function () { tip.style.display = 'none'; hoverNode = -1; };
canvas.onclick = function (ev) {
  var i = hit(ev);
  if (i < 0) return;
  zoom = i === zoom ? (TP[i] >= 0 ? TP[i] : 0) : i;
  if (TF[zoom] >= 0) select(TF[zoom], true);
  renderFlame();
};
reset.onclick = function () { zoom = 0; renderFlame(); };
bfBtn.onclick = function () { select(TF[zoom]); show('callers'); };
if (msel) msel.onchange = function () { metric = +msel.value; sortKids(); renderFlame(); doSearch(); };
function doSearch() {
  var q = search.value.trim().toLowerCase();
  if (!q) { matches = null; smatch.textContent = ''; renderFlame(); return; }
  matches = new Uint8Array(N);
  var above = new Uint8Array(N), sum = 0, n = 0;
  for (var i = 1; i < N; i++) {
    above[i] = above[TP[i]] || matches[TP[i]];
    if (TF[i] >= 0 && fname(TF[i]).toLowerCase().indexOf(q) >= 0) {
      matches[i] = 1; n++;
      if (!above[i]) sum += val(i);
    }
  }
  smatch.textContent = n ? n + ' frames match: ' + fmtPct(pct(sum, val(0))) + ' of the total' : 'no match';
  renderFlame();
}
search.oninput = doSearch;
onShow.flame = renderFlame;
window.addEventListener('resize', function () { if (current === 'flame') renderFlame(); });
document.addEventListener('keydown', function (e) { if (e.key === 'Escape' && current === 'flame') { zoom = 0; renderFlame(); } });

/* ---- callers / callees ---- */
var E = D.edges, byCallee = {}, byCaller = {};
for (var ei = 0; ei < E.callee.length; ei++) {
  (byCallee[E.callee[ei]] = byCallee[E.callee[ei]] || []).push(ei);
  if (E.caller[ei] >= 0) (byCaller[E.caller[ei]] = byCaller[E.caller[ei]] || []).push(ei);
}
var cp = panels.callers, cbar = el('div', 'bar'), cin = el('input'), dl = el('datalist'), cgo = el('button', 'btn', 'Show');
cin.type = 'text'; cin.id = 'callers-input'; cin.placeholder = 'function name'; cin.size = 40;
dl.id = 'stint-fnames'; cin.setAttribute('list', dl.id);
var byName = {};
D.functions.forEach(function (r) {
  var key = r.name + (byName[r.name] !== undefined ? ' [' + r.module + ']' : '');
  byName[key] = r.f;
  if (D.functions.length <= 20000) { var o = el('option'); o.value = key; dl.appendChild(o); }
});
var cfl = el('button', 'btn', 'Find in flame graph');
add(cbar, cin, dl, cgo, cfl);
var cbody = el('div', 'bf'); cbody.id = 'callers-view';
add(cp, cbar, cbody);
var selected = -1;
cgo.onclick = function () { var f = byName[cin.value]; if (f !== undefined) select(f); };
cin.onkeydown = function (e) { if (e.key === 'Enter') cgo.onclick(); };
cfl.onclick = function () { if (selected >= 0) { search.value = fname(selected); show('flame'); doSearch(); } };
function edgeRows(list, other, self) {
  return (list || []).map(function (e) {
    var r = { name: fname(other === 'caller' ? E.caller[e] : E.callee[e]), f: other === 'caller' ? E.caller[e] : E.callee[e] };
    r.module = fmod(r.f);
    r.calls = E.calls[e];
    if (S) {
      r.inclusive_samples = E.v[0][e]; r.exclusive_samples = E.v[1][e];
      r.inclusive_pct = pct(E.v[0][e], T[0]); r.exclusive_pct = pct(E.v[1][e], T[0]);
    } else for (var k = 0; k < 4; k++) { r[VK[k]] = E.v[k][e]; r[VK[k] + '_pct'] = pct(E.v[k][e], den(k)); }
    r.share = pct(E.v[0][e], self);
    return r;
  });
}
function select(f, quiet) {
  selected = f;
  cin.value = fname(f);
  cbody.textContent = '';
  var r = rowByF[f], selfv = r ? r[S ? 'inclusive_samples' : 'elapsed_inclusive'] : 0;
  var box = el('div', 'self');
  add(box, el('div', 'fnname', fname(f)), el('div', 'note', fmod(f) + (FN[f][2] ? '  ' + FN[f][2] + ':' + FN[f][3] : '')));
  if (r) {
    var parts = S ? ['Inclusive ' + fmtInt(r.inclusive_samples) + ' (' + fmtPct(r.inclusive_pct) + ')', 'Exclusive ' + fmtInt(r.exclusive_samples) + ' (' + fmtPct(r.exclusive_pct) + ')']
      : ['Calls ' + fmtInt(r.calls)].concat(VS.map(function (s, k) { return s + ' ' + fmtTime(r[VK[k]]) + ' (' + fmtPct(r[VK[k] + '_pct']) + ')'; }));
    add(box, el('div', 'vals', parts.join('    ')));
  }
  cbody.appendChild(box);
  if (E.shown < E.total) add(cbody, el('div', 'note', 'The smallest ' + fmtInt(E.total - E.shown) + ' of ' + fmtInt(E.total) + ' caller-callee pairs are left out of this page.'));
  var share = { k: 'share', l: '% of function', t: 'pct', h: 'share of the function\'s inclusive value' };
  var key = S ? 'inclusive_samples' : 'elapsed_inclusive';
  [['callers', 'Callers: who called ' + fname(f) + ' (its values under each caller)', byCallee[f], 'caller'],
   ['callees', 'Callees: what ' + fname(f) + ' called (their values under it)', byCaller[f], 'callee']].forEach(function (s) {
    var h = el('div');
    h.id = 'bf-' + s[0];
    add(cbody, el('h3', null, s[1]), h);
    var rows = edgeRows(s[2], s[3], selfv);
    if (!rows.length) { add(h, el('div', 'note', '(none)')); return; }
    makeTable(h, s[0] + '-table', rows, [{ k: 'name', l: s[0] === 'callers' ? 'Caller' : 'Callee', t: 'str' }, modCol].concat(valueCols(false, !S), [share]), key,
      function (x) { if (x.f >= 0) select(x.f); });
  });
  sourcePanel(f);
  if (!quiet) cp.scrollIntoView && window.scrollTo(0, 0);
}
/* instrumentation: the function's source with the four values per line
 * and a heat column (the line's Elapsed Inclusive share of the function's) */
function sourcePanel(f) {
  var L = D.lines && D.lines[f];
  if (!L) return;
  var h = el('div', 'srcview');
  h.id = 'bf-source';
  add(cbody, el('h3', null, 'Source: ' + L.file + ' (an interval of the function\'s own code counts for the line of the call that ends it; incl adds the calls made on the line)'), h);
  var r = rowByF[f], whole = r ? r.elapsed_inclusive : 0;
  var tw = el('div', 'tw'), tb = el('table'), hd = el('tr'), body = el('tbody');
  ['Line', 'Heat'].concat(VS.reduce(function (a, x) { return a.concat([x, '%']); }, []), ['Calls', 'Source']).forEach(function (t, i) {
    add(hd, el('th', i > 1 && i < 11 ? 'n' : null, t));
  });
  add(tb, add(el('thead'), hd), body);
  L.rows.forEach(function (x) {
    var tr = el('tr'), has = x[1] || x[2] || x[3] || x[4] || x[5];
    tr.dataset.line = x[0];
    add(tr, el('td', 'n', String(x[0])));
    var heat = el('td', 'heat'), share = whole > 0 ? Math.min(1, x[2] / whole) : 0;
    if (has) { heat.style.background = 'rgba(240,138,60,' + (0.1 + 0.9 * share).toFixed(3) + ')'; heat.textContent = fmtPct(100 * share); heat.title = 'share of the function\'s Elapsed Inclusive'; }
    tr.appendChild(heat);
    for (var k = 0; k < 4; k++) {
      var v = el('td', 'n', has ? fmtTime(x[2 + k]) : '');
      v.dataset.key = VK[k]; v.dataset.v = x[2 + k];
      add(tr, v, el('td', 'p', has ? fmtPct(pct(x[2 + k], den(k))) : ''));
    }
    var cl = el('td', 'n', has ? fmtInt(x[1]) : '');
    cl.dataset.key = 'calls'; cl.dataset.v = x[1];
    add(tr, cl, el('td', 'code', x[6] === null ? '' : x[6]));
    body.appendChild(tr);
  });
  add(h, add(tw, tb));
}
onShow.callers = function () {
  if (selected < 0 && D.functions.length) {
    var best = D.functions.slice().sort(function (a, b) { return (b[defKey]) - (a[defKey]); })[0];
    select(best.f, true);
  }
};

/* for tests and scripting */
window.stint = {
  data: D, show: show, select: select, sourcePanel: sourcePanel,
  frames: function () {
    var b = canvas.getBoundingClientRect();
    return rects.map(function (q) { return { node: q[0], name: label(q[0]), x: b.left + q[1], y: b.top + q[2] * ROWH, w: q[3], h: ROWH, ancestor: !!q[4] }; });
  },
  zoom: function () { return zoom; },
  zoomTo: function (i) { zoom = i >= 0 && i < N ? i : 0; renderFlame(); }
};
show('functions');
document.body.dataset.ready = '1';
})();
