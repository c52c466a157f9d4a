#!/usr/bin/env node
/*
 * run_html.js - tests of `stint html` in a real browser: Debian's chromium
 * (/usr/bin/chromium, headless) driven by playwright-core from npm.
 *
 *   node run_html.js --stint STINT --demo DEMO --sprog S_SPLIT --synth HTML_SYNTH --work DIR TEST
 *
 * TEST is one of:
 *   setup         npm install playwright-core into DIR (no browser download);
 *                 record the demo (instrumentation) and s_split (sampling),
 *                 write their reports (JSON) and HTML pages
 *   instr_table   every function, module, thread and process row of the page
 *                 equals `stint report --format json` (instrumentation);
 *                 header click sorts; summary totals
 *   sample_table  the same for sampling, and the flame graph's root
 *   flame         hover the root and a hot function (values of `report
 *                 --tree`), click to zoom, reset, search share; screenshots
 *   callers       a table row opens its callers/callees, equal to `stint
 *                 callers --format json`; clicking a caller follows it
 *   source_lines  instrumentation: the function's source with the four
 *                 values and the calls per line, equal to `stint report
 *                 --by line --format json`
 *   offline       no URL in the file, no request but the page itself, no
 *                 script error
 *   large         a synthetic 1,000,000-node tree loads and renders within
 *                 10 s and the page says what was pruned
 * Prints "PASS: TEST" or "FAIL: TEST: why" (exit status 1).
 */
'use strict';
const fs = require('fs');
const path = require('path');
const cp = require('child_process');

const args = {};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i].startsWith('--')) args[argv[i].slice(2)] = argv[++i];
  else args.test = argv[i];
}
const WORK = path.resolve(args.work || 'html-work');
const TEST = args.test;
const CHROMIUM = '/usr/bin/chromium';

class Fail extends Error {}
function check(cond, msg) { if (!cond) throw new Fail(msg); }
function skip(why) { console.log('SKIP: ' + why); process.exit(77); }

function run(cmd, argv, opts) {
  const r = cp.spawnSync(cmd, argv, Object.assign({ encoding: 'utf8', maxBuffer: 1 << 28 }, opts || {}));
  if (r.error) throw new Fail(cmd + ': ' + r.error.message);
  return r;
}
function runOk(cmd, argv, opts) {
  const r = run(cmd, argv, opts);
  check(r.status === 0, [cmd].concat(argv).join(' ') + ' exited ' + r.status + '\n' + r.stderr);
  return r;
}
function json(cmd, argv) { return JSON.parse(runOk(cmd, argv).stdout); }
function w(name) { return path.join(WORK, name); }

/* the page's own formatting, to compare what a person sees */
function fmtTime(ns) {
  if (ns < 1e3) return ns.toFixed(0) + ' ns';
  if (ns < 1e6) return (ns / 1e3).toFixed(2) + ' us';
  if (ns < 1e9) return (ns / 1e6).toFixed(2) + ' ms';
  return (ns / 1e9).toFixed(3) + ' s';
}
function fmtInt(x) { return Math.round(x).toLocaleString('en-US'); }

/* ------------------------------------------------------------------ */

function setup() {
  fs.mkdirSync(WORK, { recursive: true });
  const pw = w('node_modules/playwright-core/package.json');
  if (!fs.existsSync(pw)) {
    const env = Object.assign({}, process.env, { PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' });
    const r = run('npm', ['install', '--prefix', WORK, '--no-save', '--no-audit', '--no-fund', '--no-package-lock',
      '--loglevel=error', 'playwright-core@1.65.1'], { env, cwd: WORK });
    check(r.status === 0 && fs.existsSync(pw), 'npm install playwright-core failed (status ' + r.status + ')\n' + r.stdout + r.stderr);
  }
  const S = args.stint;
  runOk(S, ['record', '-o', w('instr.data'), '--', args.demo], { cwd: WORK });
  fs.writeFileSync(w('instr.json'), runOk(S, ['report', '-i', w('instr.data'), '--format', 'json']).stdout);
  fs.writeFileSync(w('instr.tree.json'), runOk(S, ['report', '-i', w('instr.data'), '--tree', '--threshold', '0', '--format', 'json']).stdout);
  runOk(S, ['html', '-i', w('instr.data'), '-o', w('instr.html')]);
  runOk(S, ['record', '-m', 'sample', '-o', w('sample.data'), '--', args.sprog], { cwd: WORK });
  fs.writeFileSync(w('sample.json'), runOk(S, ['report', '-i', w('sample.data'), '--format', 'json']).stdout);
  runOk(S, ['html', '-i', w('sample.data'), '-o', w('sample.html')]);
  console.log('playwright-core ' + JSON.parse(fs.readFileSync(pw, 'utf8')).version + ', pages in ' + WORK);
}

async function browser() {
  let pw;
  try { pw = require(w('node_modules/playwright-core')); } catch (e) { throw new Fail('playwright-core is not installed in ' + WORK + ' (html.setup): ' + e.message); }
  const profile = fs.mkdtempSync(path.join(require('os').tmpdir(), 'stint-chromium-'));
  /* a fresh profile each time; playwright wants it as launchPersistentContext's
   * userDataDir rather than as --user-data-dir among the args */
  const b = await pw.chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, viewport: { width: 1400, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const close = b.close.bind(b);
  b.close = async () => { await close(); fs.rmSync(profile, { recursive: true, force: true }); };
  return b;
}

/* Open file in a fresh page; collects requests and script errors. */
async function open(ctx, file) {
  const page = await ctx.newPage();
  page.requests = [];
  page.errors = [];
  page.on('request', (r) => page.requests.push(r.url()));
  page.on('pageerror', (e) => page.errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') page.errors.push(m.text()); });
  await page.goto('file://' + file);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 20000 });
  return page;
}

/* The table's rows as objects key -> {v: data-v or text, text}. */
async function tableRows(page, id) {
  return page.evaluate((id) => {
    const t = document.getElementById(id);
    const keys = Array.from(t.querySelectorAll('thead th')).map((th) => th.dataset.key);
    return Array.from(t.querySelectorAll('tbody tr')).map((tr) => {
      const o = {};
      Array.from(tr.children).forEach((td, i) => { o[keys[i]] = { v: td.dataset.v, text: td.textContent }; });
      return o;
    });
  }, id);
}

function checkRows(what, pageRows, jsonRows, keyOf, cols, sampling) {
  check(pageRows.length === jsonRows.length, what + ': the page shows ' + pageRows.length + ' rows, the report has ' + jsonRows.length);
  const byKey = new Map(jsonRows.map((r) => [keyOf(r), r]));
  for (const pr of pageRows) {
    const k = keyOf({ name: pr.name && pr.name.text, module: pr.module && pr.module.text, tid: pr.tid && +pr.tid.v, pid: pr.pid && +pr.pid.v, command: pr.command && pr.command.text });
    const jr = byKey.get(k);
    check(jr, what + ': the page has a row ' + k + ' the report does not');
    for (const c of cols) {
      if (!(c in pr)) throw new Fail(what + ': the page has no column ' + c);
      const got = Number(pr[c].v), want = jr[c];
      check(want !== undefined, what + ': the report has no ' + c);
      if (c.endsWith('_pct')) {
        check(Math.abs(got - want) < 1e-9, what + ' ' + k + ' ' + c + ': page ' + got + ', report ' + want);
        check(pr[c].text === want.toFixed(2) + '%', what + ' ' + k + ' ' + c + ': page shows "' + pr[c].text + '", report ' + want);
      } else {
        check(got === want, what + ' ' + k + ' ' + c + ': page ' + got + ', report ' + want);
        const shown = sampling || c === 'calls' || c === 'tid' || c === 'pid' ? fmtInt(want) : fmtTime(want);
        check(pr[c].text === shown, what + ' ' + k + ' ' + c + ': page shows "' + pr[c].text + '", expected "' + shown + '"');
      }
    }
  }
}

const IVALS = ['elapsed_inclusive', 'elapsed_exclusive', 'application_inclusive', 'application_exclusive'];

async function instrTable() {
  const rep = JSON.parse(fs.readFileSync(w('instr.json'), 'utf8'));
  const b = await browser();
  try {
    const page = await open(b, w('instr.html'));
    const vals = IVALS.concat(IVALS.map((k) => k + '_pct'));
    const perCall = [];
    IVALS.forEach((k) => perCall.push(k + '_avg', k + '_min', k + '_max'));
    const fkey = (r) => r.name + ' [' + r.module + ']';
    checkRows('functions', await tableRows(page, 'functions-table'), rep.functions, fkey, ['calls'].concat(vals, perCall), false);
    checkRows('modules', await tableRows(page, 'modules-table'), rep.modules, (r) => r.name, ['calls'].concat(vals), false);
    checkRows('threads', await tableRows(page, 'threads-table'), rep.threads, (r) => r.tid + '/' + r.pid, ['tid', 'pid'].concat(vals), false);
    checkRows('processes', await tableRows(page, 'processes-table'), rep.processes, (r) => String(r.pid), ['pid'].concat(vals), false);
    /* sorting: a click on "Calls" sorts by calls, most first; a second click reverses */
    await page.click('#functions-table th[data-key="calls"]');
    let calls = (await tableRows(page, 'functions-table')).map((r) => +r.calls.v);
    check(calls.every((c, i) => i === 0 || calls[i - 1] >= c), 'sorting by calls: not descending: ' + calls);
    check(calls[0] === Math.max.apply(null, rep.functions.map((f) => f.calls)), 'sorting by calls: first row ' + calls[0]);
    await page.click('#functions-table th[data-key="calls"]');
    calls = (await tableRows(page, 'functions-table')).map((r) => +r.calls.v);
    check(calls.every((c, i) => i === 0 || calls[i - 1] <= c), 'sorting by calls again: not ascending: ' + calls);
    await page.click('#functions-table th[data-key="name"]');
    const names = (await tableRows(page, 'functions-table')).map((r) => r.name.text);
    check(names.join('\n') === names.slice().sort((a, b) => a.localeCompare(b)).join('\n'), 'sorting by name: ' + names);
    /* the summary */
    const head = await page.textContent('header');
    for (const s of [rep.command, 'instrumentation', 'Session EI' + fmtTime(rep.session.elapsed_inclusive), 'Session AI' + fmtTime(rep.session.application_inclusive), rep.os_event_detector])
      check(head.includes(s), 'summary lacks "' + s + '": ' + head);
    check(page.errors.length === 0, 'script errors: ' + page.errors.join('; '));
    await page.screenshot({ path: w('functions.png'), fullPage: false });
  } finally { await b.close(); }
}

async function sampleTable() {
  const rep = JSON.parse(fs.readFileSync(w('sample.json'), 'utf8'));
  check(rep.method === 'sampling' && rep.samples > 0, 'the sampling report has no samples');
  const b = await browser();
  try {
    const page = await open(b, w('sample.html'));
    const cols = ['inclusive_samples', 'exclusive_samples', 'inclusive_pct', 'exclusive_pct'];
    checkRows('functions', await tableRows(page, 'functions-table'), rep.functions, (r) => r.name + ' [' + r.module + ']', cols, true);
    checkRows('modules', await tableRows(page, 'modules-table'), rep.modules, (r) => r.name, cols, true);
    checkRows('threads', await tableRows(page, 'threads-table'), rep.threads, (r) => r.tid + '/' + r.pid, ['tid', 'pid'].concat(cols), true);
    checkRows('processes', await tableRows(page, 'processes-table'), rep.processes, (r) => String(r.pid), ['pid'].concat(cols), true);
    const head = await page.textContent('header');
    check(head.includes('Samples' + fmtInt(rep.samples)), 'summary lacks the sample count ' + rep.samples + ': ' + head);
    check(head.includes('Unwinder'), 'summary lacks the unwinder: ' + head);
    /* flame graph root: every sample */
    await page.click('nav button[data-tab="flame"]');
    const root = (await page.evaluate(() => window.stint.frames())).find((f) => f.node === 0);
    await page.mouse.move(root.x + root.w / 2, root.y + root.h / 2);
    const tip = await page.textContent('#tip');
    check(tip.includes('Inclusive samples' + fmtInt(rep.session.inclusive_samples) + '  (100.00%)'), 'root tooltip: ' + tip);
    /* the hottest function's frame */
    const hot = rep.functions.slice().sort((a, b) => b.exclusive_samples - a.exclusive_samples)[0];
    const fr = (await page.evaluate(() => window.stint.frames())).filter((f) => f.name === hot.name).sort((a, b) => b.w - a.w)[0];
    check(fr, 'no frame of the hottest function ' + hot.name);
    const all = (await page.evaluate(() => window.stint.frames())).filter((f) => f.name === hot.name);
    if (all.length === 1) { /* on one call path only: its frame holds the function's values */
      await page.mouse.move(fr.x + Math.min(fr.w / 2, 40), fr.y + fr.h / 2);
      const ht = await page.textContent('#tip');
      for (const want of ['Inclusive samples' + fmtInt(hot.inclusive_samples), 'Exclusive samples' + fmtInt(hot.exclusive_samples)])
        check(ht.includes(want), hot.name + ' tooltip lacks "' + want + '": ' + ht);
    }
    check(page.errors.length === 0, 'script errors: ' + page.errors.join('; '));
    await page.screenshot({ path: w('sample-flame.png') });
  } finally { await b.close(); }
}

/* Path nodes of report --tree JSON, flattened: {path, node}. */
function treePaths(tree) {
  const out = [];
  (function walk(list, pre) {
    for (const n of list) { const p = pre.concat(n.name); out.push({ path: p, node: n }); walk(n.children, p); }
  })(tree.roots, []);
  return out;
}

async function frameTip(page, pred) {
  const frames = await page.evaluate(() => window.stint.frames());
  const f = frames.filter(pred).sort((a, b) => b.w - a.w)[0];
  if (!f) return null;
  await page.mouse.move(f.x + Math.min(f.w / 2, 40), f.y + f.h / 2);
  return { frame: f, tip: await page.textContent('#tip') };
}

function isPng(file, minBytes) {
  const buf = fs.readFileSync(file);
  check(buf.length > minBytes, file + ': only ' + buf.length + ' bytes');
  check(buf.slice(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), file + ' is not a PNG');
  const wd = buf.readUInt32BE(16), ht = buf.readUInt32BE(20);
  check(wd >= 800 && ht >= 600, file + ': ' + wd + 'x' + ht);
}

async function flame() {
  const rep = JSON.parse(fs.readFileSync(w('instr.json'), 'utf8'));
  const tree = JSON.parse(fs.readFileSync(w('instr.tree.json'), 'utf8'));
  const paths = treePaths(tree);
  const b = await browser();
  try {
    const page = await open(b, w('instr.html'));
    await page.click('nav button[data-tab="flame"]');
    /* the root: the session's totals */
    let t = await frameTip(page, (f) => f.node === 0);
    const s = rep.session;
    for (const want of ['Elapsed Inclusive' + fmtTime(s.elapsed_inclusive) + '  (100.00%)',
      'Application Inclusive' + fmtTime(s.application_inclusive) + '  (100.00%)'])
      check(t.tip.includes(want), 'root tooltip lacks "' + want + '": ' + t.tip);
    /* a hot function: main -> sort_numbers of the demo */
    const hot = paths.find((p) => p.path.join('/') === 'main/sort_numbers');
    check(hot, 'report --tree has no main/sort_numbers');
    t = await frameTip(page, (f) => f.name === 'sort_numbers');
    check(t, 'no sort_numbers frame');
    const n = hot.node;
    for (const want of ['sort_numbers', 'demo', 'Calls' + fmtInt(n.calls)])
      check(t.tip.includes(want), 'sort_numbers tooltip lacks "' + want + '": ' + t.tip);
    /* values exact as shown; the page's percentages come from whole
     * nanoseconds, the report's from the unrounded values: +-0.01 */
    for (const [label, key] of [['Elapsed Inclusive', 'elapsed_inclusive'], ['Elapsed Exclusive', 'elapsed_exclusive'],
      ['Application Inclusive', 'application_inclusive'], ['Application Exclusive', 'application_exclusive']]) {
      const re = new RegExp(label + '(.+?)  \\(([0-9.]+)%\\)');
      const mt = re.exec(t.tip);
      check(mt && mt[1] === fmtTime(n[key]), 'sort_numbers tooltip: ' + label + ' "' + (mt && mt[1]) + '", expected ' + fmtTime(n[key]) + ': ' + t.tip);
      check(Math.abs(+mt[2] - n[key + '_pct']) <= 0.0101, 'sort_numbers tooltip: ' + label + ' ' + mt[2] + '%, expected ' + n[key + '_pct']);
    }
    await page.screenshot({ path: w('flame-hover.png') });
    /* click to zoom: sort_numbers fills the width, qsort under it widens */
    const W = (await page.evaluate(() => window.stint.frames())).find((f) => f.node === 0).w;
    const q0 = (await page.evaluate(() => window.stint.frames())).find((f) => f.name === 'qsort' && !f.ancestor);
    await page.mouse.click(t.frame.x + Math.min(t.frame.w / 2, 40), t.frame.y + t.frame.h / 2);
    check((await page.evaluate(() => window.stint.zoom())) === t.frame.node, 'the click did not zoom to sort_numbers');
    const after = await page.evaluate(() => window.stint.frames());
    const z = after.find((f) => f.node === t.frame.node);
    check(Math.abs(z.w - W) < 1, 'zoomed sort_numbers is ' + z.w + ' px wide, the graph ' + W);
    const q1 = after.find((f) => f.name === 'qsort' && !f.ancestor);
    /* by the zoom's own factor (sort_numbers' share of the run varies with the machine's load) */
    const factor = W / t.frame.w;
    check(q0 && q1 && q1.w > q0.w * factor * 0.95 && q1.w > q0.w, 'qsort did not widen on zoom by ' + factor.toFixed(2) + 'x: ' + (q0 && q0.w) + ' -> ' + (q1 && q1.w));
    check(!after.some((f) => f.name === 'usleep'), 'usleep (not under sort_numbers) is still drawn after zooming');
    check((await page.textContent('#flame-zoom')).includes('Zoomed to sort_numbers'), 'the zoom line: ' + await page.textContent('#flame-zoom'));
    await page.screenshot({ path: w('flame-zoom.png') });
    await page.click('#flame-reset');
    check((await page.evaluate(() => window.stint.zoom())) === 0, 'reset did not zoom out');
    /* search: fib frames highlighted, with their share of the total */
    await page.fill('#flame-search', 'fib');
    const m = await page.textContent('#flame-match');
    let want = 0;
    (function walk(list, under) {
      for (const x of list) { const hit = x.name.includes('fib'); if (hit && !under) want += x.elapsed_inclusive; walk(x.children, under || hit); }
    })(tree.roots, false);
    const sharePct = 100 * want / s.elapsed_inclusive;
    const mm = /: ([0-9.]+)% of the total/.exec(m);
    check(mm && Math.abs(+mm[1] - sharePct) < 0.02, 'search "fib": "' + m + '", expected ' + sharePct.toFixed(2) + '%');
    let fibFrame = (await page.evaluate(() => window.stint.frames())).filter((f) => f.name === 'fib').sort((a, b) => b.w - a.w)[0];
    check(fibFrame, 'no fib frame drawn');
    if (fibFrame.w < 4) { /* too thin to read a pixel of: zoom to it, the highlight stays */
      await page.evaluate((n) => window.stint.zoomTo(n), fibFrame.node);
      fibFrame = (await page.evaluate(() => window.stint.frames())).find((f) => f.node === fibFrame.node);
    }
    const px = await page.evaluate((f) => {
      const c = document.getElementById('flame-canvas'), b = c.getBoundingClientRect(), r = window.devicePixelRatio || 1;
      return Array.from(c.getContext('2d').getImageData(Math.round((f.x - b.left + 1) * r), Math.round((f.y - b.top + 2) * r), 1, 1).data);
    }, fibFrame);
    check(px[0] === 0xc0 && px[1] === 0x5e && px[2] === 0xe0, 'a fib frame is not highlighted: rgba ' + px);
    await page.click('#flame-reset');
    await page.screenshot({ path: w('flame-search.png') });
    check(page.errors.length === 0, 'script errors: ' + page.errors.join('; '));
    await page.fill('#flame-search', '');
    await page.mouse.move(5, 5);
    await page.screenshot({ path: w('flame.png') });
    for (const f of ['flame.png', 'flame-zoom.png', 'flame-search.png']) isPng(w(f), 10000);
    console.log('screenshots: ' + w('flame.png') + ' ' + w('flame-zoom.png') + ' ' + w('flame-search.png') + ' ' + w('flame-hover.png'));
  } finally { await b.close(); }
}

async function callers() {
  const cj = json(args.stint, ['callers', '-i', w('instr.data'), '--format', 'json', 'qsort']);
  const b = await browser();
  try {
    const page = await open(b, w('instr.html'));
    const rows = await page.$$('#functions-table tbody tr');
    let clicked = false;
    for (const r of rows) {
      if ((await r.$eval('td', (td) => td.textContent)) === 'qsort') { await r.click(); clicked = true; break; }
    }
    check(clicked, 'no qsort row in the functions table');
    check(await page.isVisible('#callers-view'), 'clicking a row did not open callers/callees');
    check((await page.textContent('#callers-view .fnname')) === 'qsort', 'the view is not about qsort');
    const cr = await tableRows(page, 'callers-table');
    check(cr.length === cj.callers.length, 'callers: page ' + cr.length + ', stint callers ' + cj.callers.length);
    for (const want of cj.callers) {
      const got = cr.find((r) => r.name.text === want.name);
      check(got, 'callers lack ' + want.name);
      for (const k of ['calls'].concat(IVALS))
        check(+got[k].v === want[k], 'caller ' + want.name + ' ' + k + ': page ' + got[k].v + ', stint callers ' + want[k]);
      check(Math.abs(+got.share.v - want.share_pct) < 1e-3, 'caller ' + want.name + ' share ' + got.share.v + ' vs ' + want.share_pct);
    }
    check(cr.some((r) => r.name.text === 'sort_numbers'), 'sort_numbers is not a caller of qsort');
    const ce = await tableRows(page, 'callees-table');
    check(ce.length === cj.callees.length, 'callees: page ' + ce.length + ', stint callers ' + cj.callees.length);
    for (const want of cj.callees) {
      const got = ce.find((r) => r.name.text === want.name);
      check(got && +got.elapsed_inclusive.v === want.elapsed_inclusive && +got.calls.v === want.calls, 'callee ' + want.name + ' differs');
    }
    /* follow the caller */
    const link = await page.$('#callers-table tbody tr');
    await link.click();
    check((await page.textContent('#callers-view .fnname')) === 'sort_numbers', 'clicking the caller did not select it');
    const ce2 = await tableRows(page, 'callees-table');
    check(ce2.some((r) => r.name.text === 'qsort'), 'sort_numbers does not list qsort among its callees');
    await page.screenshot({ path: w('callers.png') });
    check(page.errors.length === 0, 'script errors: ' + page.errors.join('; '));
  } finally { await b.close(); }
}

/* instrumentation: a function's panel shows its source with the four
 * values per line, equal to `stint report --by line --format json` */
async function sourceLines() {
  const lj = json(args.stint, ['report', '-i', w('instr.data'), '--by', 'line', '--format', 'json']);
  const b = await browser();
  try {
    const page = await open(b, w('instr.html'));
    const rows = await page.$$('#functions-table tbody tr');
    let clicked = false;
    for (const r of rows) {
      if ((await r.$eval('td', (td) => td.textContent)) === 'sort_numbers') { await r.click(); clicked = true; break; }
    }
    check(clicked, 'no sort_numbers row in the functions table');
    check(await page.isVisible('#bf-source'), 'the panel of sort_numbers has no source view');
    const got = await page.evaluate(() => Array.from(document.querySelectorAll('#bf-source tbody tr')).map((tr) => {
      const o = { line: +tr.dataset.line, code: tr.lastChild.textContent };
      tr.querySelectorAll('td[data-key]').forEach((td) => { o[td.dataset.key] = +td.dataset.v; });
      return o;
    }));
    check(got.length > 0, 'the source view has no lines');
    check(got.some((r) => /qsort/.test(r.code)), 'the source view does not show the line calling qsort');
    let withValues = 0;
    for (const r of got) {
      if (!r.calls && !r.elapsed_inclusive && !r.elapsed_exclusive) continue;
      withValues++;
      const want = lj.lines.find((x) => x.line === r.line && /demo\.c$/.test(x.file));
      check(want, 'line ' + r.line + ' has values in the page but no row in report --by line');
      for (const k of ['calls'].concat(IVALS))
        check(r[k] === want[k], 'line ' + r.line + ' ' + k + ': page ' + r[k] + ', report --by line ' + want[k]);
    }
    check(got.some((r) => /qsort/.test(r.code) && r.calls >= 1), 'the qsort line shows no call');
    check(withValues >= 2, 'fewer than 2 lines with values');
    await page.screenshot({ path: w('source.png') });
    check(page.errors.length === 0, 'script errors: ' + page.errors.join('; '));
  } finally { await b.close(); }
}

async function offline() {
  for (const f of ['instr.html', 'sample.html']) {
    const text = fs.readFileSync(w(f), 'utf8');
    for (const bad of ['http:', 'https:', '//cdn', '<link', '@import', 'url(', ' src=', '<iframe', 'fetch(', 'XMLHttpRequest'])
      check(!text.includes(bad), f + ' contains "' + bad + '"');
  }
  const b = await browser();
  try {
    for (const f of ['instr.html', 'sample.html']) {
      const page = await open(b, w(f));
      const external = [];
      await page.route('**/*', (route) => { if (!route.request().url().startsWith('file:')) external.push(route.request().url()); route.continue(); });
      for (const tab of ['modules', 'threads', 'processes', 'flame', 'callers', 'functions'])
        await page.click('nav button[data-tab="' + tab + '"]');
      await page.waitForTimeout(300);
      const others = page.requests.filter((u) => u !== 'file://' + w(f));
      check(others.length === 0 && external.length === 0, f + ': requests besides the page: ' + others.concat(external).join(' '));
      check(page.errors.length === 0, f + ': script errors: ' + page.errors.join('; '));
    }
  } finally { await b.close(); }
}

async function large() {
  const out = w('large.html');
  const stats = JSON.parse(runOk(args.synth, [out, '1000000']).stdout);
  check(stats.source_nodes === 1000000, 'synthetic tree of ' + stats.source_nodes + ' nodes');
  check(stats.shown_nodes <= 50000 && stats.shown_nodes > 1000, 'the page holds ' + stats.shown_nodes + ' nodes');
  check(stats.folded_nodes > 0 && stats.other_nodes > 0, 'nothing folded: ' + JSON.stringify(stats));
  const size = fs.statSync(out).size;
  const b = await browser();
  try {
    const t0 = Date.now();
    const page = await open(b, out);
    await page.click('nav button[data-tab="flame"]');
    const nframes = await page.evaluate(() => window.stint.frames().length);
    const ms = Date.now() - t0;
    /* times are printed, not asserted: the machine running the tests may be loaded */
    check(nframes > 100, 'only ' + nframes + ' frames drawn');
    const head = await page.textContent('header');
    const wantNote = fmtInt(stats.shown_nodes - stats.other_nodes) + ' of ' + fmtInt(stats.source_nodes) + ' call paths shown; ' +
      fmtInt(stats.folded_nodes) + ' smaller paths';
    check(head.includes(wantNote), 'the page does not say what was pruned ("' + wantNote + '"): ' + head);
    check(head.includes(fmtInt(stats.other_nodes) + ' "(other)" frames'), 'no "(other)" count in: ' + head);
    /* stays responsive: hover, zoom and search each answer fast */
    let t = Date.now();
    const tip = await frameTip(page, (f) => f.node === 0);
    check(tip.tip.includes(fmtTime(stats.total_ei) + '  (100.00%)'), 'root tooltip: ' + tip.tip);
    /* zoom in, deeper each time, until an "(other)" frame is wide enough to hover */
    let other = null;
    for (let depth = 0; depth < 12 && !other; depth++) {
      const fr = await page.evaluate(() => window.stint.frames());
      other = fr.find((f) => f.name.startsWith('(other') && f.w >= 3);
      if (other) break;
      const z = await page.evaluate(() => window.stint.zoom());
      const zf = fr.find((f) => f.node === z);
      const big = fr.filter((f) => !f.ancestor && f.node !== z && f.y > zf.y && !f.name.startsWith('(other')).sort((a, b) => b.w - a.w)[0];
      if (!big) break;
      await page.mouse.click(big.x + 3, big.y + 5);
      check((await page.evaluate(() => window.stint.zoom())) === big.node, 'no zoom on the large graph');
    }
    check(other, 'no "(other)" frame found while zooming in');
    const ot = await frameTip(page, (f) => f.node === other.node);
    check(/call paths below .* each, summed/.test(ot.tip), '(other) frame tooltip: ' + ot.tip);
    await page.screenshot({ path: w('large-zoom.png') });
    await page.fill('#flame-search', 'synth_fn_00');
    check(/frames match/.test(await page.textContent('#flame-match')), 'search on the large graph: ' + await page.textContent('#flame-match'));
    const ms2 = Date.now() - t;
    console.log('large: hover, zoom and search answered in ' + ms2 + ' ms');
    await page.click('#flame-reset');
    await page.screenshot({ path: w('large.png') });
    check(page.errors.length === 0, 'script errors: ' + page.errors.join('; '));
    console.log('large: ' + (size / 1e6).toFixed(1) + ' MB page, written in ' + stats.write_s + ' s, loaded and drawn in ' + ms +
      ' ms; ' + stats.shown_nodes + ' nodes shown of ' + stats.source_nodes + ', ' + stats.folded_nodes + ' folded into ' + stats.other_nodes +
      ' (other); ' + stats.dropped_edges + ' of ' + (stats.edges + stats.dropped_edges) + ' caller-callee pairs left out');
  } finally { await b.close(); }
}

const TESTS = { setup, instr_table: instrTable, sample_table: sampleTable, flame, callers, source_lines: sourceLines, offline, large };

(async () => {
  if (!TESTS[TEST]) { console.log('unknown test ' + TEST + '; tests: ' + Object.keys(TESTS).join(' ')); process.exit(2); }
  if (!fs.existsSync(CHROMIUM)) skip(CHROMIUM + ' is not installed');
  try {
    await TESTS[TEST]();
    console.log('PASS: ' + TEST);
  } catch (e) {
    console.log('FAIL: ' + TEST + ': ' + (e instanceof Fail ? e.message : e.stack));
    process.exit(1);
  }
})();
