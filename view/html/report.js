/* tracer's HTML run report (docs/html.md). Everything shown came from a host: it reaches the page only as
 * text (textContent, setAttribute of numbers, fixed class names and a step's id as data-step), never as
 * markup: nothing here parses HTML or runs code from a string (tests/test_view_html.c checks), and nothing makes a
 * request (the page's Content-Security-Policy allows none).
 *
 * window.tracerReport.render(data, root) draws the page data (view/html_data.h, schema tracer.page.v1) into
 * the element root, replacing whatever render put there before; tracer-web's dashboard calls it as an
 * external script. The report file carries its data as JSON in the element #run-data (a script element of
 * type application/json): when that element exists, it is drawn into #report at load. */
'use strict';
(function () {
  var MAX_ROWS = 2000;      /* rows of any table, nodes of the process tree, steps in the timeline */
  var MAX_PROC_BARS = 5000; /* process bars in the timeline */
  var SVG_NS = 'http://www.w3.org/2000/svg'; /* an XML namespace name, never fetched */
  var SCHEMA = 'tracer.page.v1';

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.setAttribute('class', cls);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function svg(tag, attrs) {
    var e = document.createElementNS(SVG_NS, tag);
    for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, String(attrs[k]));
    return e;
  }
  function note(parent, text, cls) { parent.appendChild(el('p', 'note' + (cls ? ' ' + cls : ''), text)); }
  function num(v) { return typeof v === 'number' && isFinite(v) ? v : null; }
  function str(v) {
    if (v === null || v === undefined) return '-';
    if (typeof v === 'object') return JSON.stringify(v);
    return String(v);
  }
  function arr(v) { return Array.isArray(v) ? v : []; }
  function obj(v) { return v && typeof v === 'object' && !Array.isArray(v) ? v : {}; }
  function count(n) { return num(n) === null ? '-' : n.toLocaleString('en-US'); }
  function cpusText(n) { return n === 1 ? '1 CPU' : count(n) + ' CPUs'; }

  function fmtDur(ns) {
    if (num(ns) === null) return '-';
    var a = Math.abs(ns);
    if (a < 1e3) return ns.toFixed(0) + 'ns';
    if (a < 1e6) return (ns / 1e3).toFixed(1) + 'us';
    if (a < 1e9) return (ns / 1e6).toFixed(a < 1e7 ? 2 : 1) + 'ms';
    if (a < 60e9) return (ns / 1e9).toFixed(2) + 's';
    if (a < 3600e9) return Math.floor(ns / 60e9) + 'm' + ((ns % 60e9) / 1e9).toFixed(0) + 's';
    return Math.floor(ns / 3600e9) + 'h' + Math.floor((ns % 3600e9) / 60e9) + 'm';
  }
  function fmtBytes(b) {
    if (num(b) === null) return '-';
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    while (Math.abs(b) >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return (i ? b.toFixed(1) : b.toFixed(0)) + u[i];
  }
  function fmtTime(ns) {
    if (num(ns) === null) return '-';
    var d = new Date(ns / 1e6);
    return isNaN(d.getTime()) ? '-' : d.toISOString().replace('T', ' ').replace('Z', ' UTC');
  }
  function stepState(s) {
    if (typeof s.state === 'string' && s.state) return s.state;
    if (s.failed === true) return 'failed';
    if (num(s.end_ns) === null) return 'running';
    return 'succeeded';
  }
  function stateClass(state) {
    if (/fail|oom|kill/.test(state)) return 'st-failed';
    if (/run/.test(state)) return 'st-running';
    if (/lost|unknown/.test(state)) return 'st-lost';
    return 'st-ok';
  }
  function runState(r) {
    if (typeof r.state === 'string' && r.state) return r.state;
    if (num(r.exit_code) === 0) return 'succeeded';
    if (num(r.exit_code) !== null || (num(r.signal) || 0) > 0) return 'failed';
    return 'unknown';
  }
  function runLabel(r) {
    var run = obj(r.run);
    if (typeof run.pipeline === 'string' && run.pipeline) return run.pipeline;
    return arr(r.command).map(str).join(' ') || 'run';
  }

  /* ---- the page data, read once: columns of processes, steps with their figures ------------------ */
  function model(data) {
    var rep = obj(data.report), P = obj(data.processes), S = arr(data.strings), counts = obj(data.counts);
    var col = function (name) { return arr(P[name]); };
    var m = {
      rep: rep, counts: counts, strings: S,
      t0: num(data.t0_ns) || 0, T: Math.max(num(data.span_ns) || 0, 1),
      pid: col('pid'), parent: col('parent'), start: col('start_us'), dur: col('dur_us'), tool: col('tool'),
      step: col('step'), exe: col('exe'), status: col('status'), cpu: col('cpu_us'), rss: col('rss_kib'),
      oom: {}, argv: {}, byStep: new Map(),
      steps: arr(data.steps).filter(function (s) { return s && typeof s === 'object'; }),
      stats: arr(data.step_stats), signals: arr(data.signals).filter(function (g) { return g && typeof g === 'object'; }),
      tools: arr(data.tools), resources: obj(data.resources)
    };
    m.n = m.pid.length;
    arr(data.oom).forEach(function (i) { m.oom[i] = true; });
    arr(data.argv).forEach(function (a) { if (Array.isArray(a) && Array.isArray(a[1])) m.argv[a[0]] = a[1]; });
    for (var i = 0; i < m.n; i++) {
      var id = m.step[i] >= 0 ? S[m.step[i]] : null;
      if (typeof id !== 'string') continue;
      if (!m.byStep.has(id)) m.byStep.set(id, []);
      m.byStep.get(id).push(i);
    }
    /* A step is flagged by a signal that says it is stuck or slow: from the stats (every signal of the run)
     * and from the signals this data carries. */
    var flagged = new Set();
    m.signals.forEach(function (g) {
      if ((g.kind === 'stalled' || g.kind === 'slower_than_usual') && typeof g.step === 'string') flagged.add(g.step);
    });
    m.meta = new Map(); /* per step: its stats, whether a signal flags it, its state */
    m.steps.forEach(function (s, k) {
      var st = obj(m.stats[k]);
      m.meta.set(s, { stats: st, flagged: st.flagged === true || flagged.has(s.id), state: stepState(s) });
    });
    return m;
  }
  /* A process's times in nanoseconds since t0; its end null while it runs. */
  function pStart(m, i) { return num(m.start[i]) === null ? null : m.start[i] * 1e3; }
  function pEnd(m, i) { var a = pStart(m, i); return a === null || num(m.dur[i]) === null ? null : a + m.dur[i] * 1e3; }
  function pFailed(m, i) {
    var s = m.status[i];
    return m.oom[i] === true || (num(s) !== null && s !== 0 && s !== -13);
  }
  function pName(m, i) { return m.tool[i] >= 0 ? str(m.strings[m.tool[i]]) : '-'; }
  function pEnding(m, i) {
    var s = m.status[i];
    if (m.oom[i]) return 'OOM-killed';
    if (num(s) === null) return 'running';
    return s < 0 ? 'signal ' + (-s) : 'exit ' + s;
  }
  function stepStart(m, s) { return num(s.start_ns) === null ? null : s.start_ns - m.t0; }
  function stepEnd(m, s) { return num(s.end_ns) === null ? null : s.end_ns - m.t0; }

  /* A key/value table of [label, text, class] rows. */
  function kvTable(rows) {
    var t = el('table', 'kv');
    rows.forEach(function (r) {
      var tr = el('tr');
      tr.appendChild(el('th', null, r[0]));
      tr.appendChild(el('td', r[2] || null, r[1]));
      t.appendChild(tr);
    });
    return t;
  }

  /* A table sortable by any column: cols [{title, get (row -> value), fmt (value -> text), num,
   * suffix (row -> text after the value)}];
   * decorate(tr, row) sets a row's class and attributes. At most MAX_ROWS rows are drawn. */
  function sortableTable(parent, cols, rows, decorate, what) {
    var t = el('table', 'sortable'), thead = el('thead'), tbody = el('tbody'), htr = el('tr');
    var key = -1, desc = false, more = el('p', 'note');
    function fill() {
      while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
      rows.slice(0, MAX_ROWS).forEach(function (r) {
        var tr = el('tr');
        if (decorate) decorate(tr, r);
        cols.forEach(function (c) {
          var v = c.get(r);
          tr.appendChild(el('td', c.num ? 'num' : (c.cls || null), (c.fmt ? c.fmt(v) : str(v)) + (c.suffix ? c.suffix(r) : '')));
        });
        tbody.appendChild(tr);
      });
      more.textContent = rows.length > MAX_ROWS ? count(MAX_ROWS) + ' of ' + count(rows.length) + ' ' + what +
        ' shown (the first in this order)' : '';
    }
    cols.forEach(function (c, i) {
      var th = el('th', 'sortable' + (c.num ? ' num' : ''), c.title);
      th.addEventListener('click', function () {
        desc = key === i ? !desc : !!c.num;
        key = i;
        Array.prototype.forEach.call(htr.children, function (h) { h.classList.remove('sorted-asc', 'sorted-desc'); });
        th.classList.add(desc ? 'sorted-desc' : 'sorted-asc');
        rows.sort(function (a, b) {
          var x = c.get(a), y = c.get(b);
          if (x === null || x === undefined) return 1;
          if (y === null || y === undefined) return -1;
          var r = c.num ? x - y : String(x).localeCompare(String(y));
          return desc ? -r : r;
        });
        fill();
      });
      htr.appendChild(th);
    });
    thead.appendChild(htr);
    t.appendChild(thead);
    t.appendChild(tbody);
    fill();
    parent.appendChild(t);
    parent.appendChild(more);
  }

  /* ---- the run ------------------------------------------------------------------------------------ */
  function drawSummary(m, s) {
    var r = m.rep, h = r.host, run = obj(r.run), c = m.counts, state = runState(r);
    var rows = [
      ['command', arr(r.command).map(str).join(' ')],
      ['state', state, stateClass(state) === 'st-failed' ? 'state-failed' : null],
      ['exit', num(r.exit_code) !== null ? String(r.exit_code) : (num(r.signal) ? 'signal ' + r.signal : '-')],
      ['start', fmtTime(r.start_ns)],
      ['end', fmtTime(r.end_ns)],
      ['duration', num(r.start_ns) !== null && num(r.end_ns) !== null ? fmtDur(r.end_ns - r.start_ns) : '-'],
      ['processes', count(num(c.processes) !== null ? c.processes : m.n)],
      ['steps', count(num(c.steps) !== null ? c.steps : m.steps.length)],
      ['signals', count(num(c.signals) !== null ? c.signals : m.signals.length)]
    ];
    /* A run with cluster jobs: the time one waited in the scheduler's queue while no step ran. */
    var q = obj(r.queue);
    if (num(q.queued_ns) !== null && num(q.running_ns) !== null)
      rows.push(['queued', fmtDur(q.queued_ns) + ' (a cluster job waited in the queue, no step ran); running ' +
        fmtDur(q.running_ns)]);
    if (num(run.jobs)) rows.push(['cluster jobs', count(run.jobs)]);
    if (run.pipeline) rows.push(['pipeline', str(run.pipeline)]);
    if (run.engine) rows.push(['engine', str(run.engine)]);
    if (run.run_id) rows.push(['pipeline run', str(run.run_id)]);
    if (run.key) rows.push(['run key', str(run.key)]);
    if (typeof h === 'string') rows.push(['host', h]);
    else {
      h = obj(h);
      if (num(h.cpus) !== null) rows.push(['host CPUs', String(h.cpus)]);
      if (num(h.memory_bytes) !== null) rows.push(['host memory', fmtBytes(h.memory_bytes)]);
      if (h.instance_type) rows.push(['instance type', str(h.instance_type)]);
    }
    s.appendChild(kvTable(rows));
    /* What this file leaves out, said once, here; each section says what it does not draw. */
    var left = [];
    function of(listed, total, what, why) {
      if (num(listed) !== null && num(total) !== null && listed < total)
        left.push(count(listed) + ' of ' + count(total) + ' ' + what + why);
    }
    of(c.processes_listed, c.processes, 'processes are in this file', ' (the tools table and the step figures count all of them)');
    of(c.argv_listed, c.argv, 'command lines are in this file', ' (those of processes that failed first, then the longest-lived)');
    of(c.steps_listed, c.steps, 'steps are in this file', ' (the first in the report\'s order)');
    of(c.signals_listed, c.signals, 'signals are in this file', ' (the first in the report\'s order)');
    of(c.tools_listed, c.tools, 'tools are in this file', ' (those with the most CPU time)');
    left.forEach(function (t) { note(s, t, 'caps'); });
  }

  /* Tick spacing: 1, 2 or 5 times a power of ten nanoseconds, about 8 ticks across. */
  function tickStep(span) {
    var raw = span / 8, p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1))));
    var q = raw / p;
    return (q < 2 ? 1 : q < 5 ? 2 : 5) * p;
  }

  /* Ticks for times v0..v1 (ns since the run's start) across x0..x1. */
  function drawAxis(g, x0, x1, v0, v1, top, height) {
    var step = tickStep(v1 - v0), scale = (x1 - x0) / (v1 - v0);
    for (var t = Math.ceil(v0 / step) * step; t <= v1; t += step) {
      var x = x0 + (t - v0) * scale;
      g.appendChild(svg('line', { x1: x, x2: x, y1: top, y2: top + height }));
      var label = svg('text', { x: x + 2, y: top + 11 });
      label.textContent = fmtDur(t);
      g.appendChild(label);
    }
  }

  /* ---- the timeline: a bar per step, its processes within; zoom down to milliseconds --------------- */
  function drawTimeline(m, s) {
    var T = m.T, view = [0, T];
    var steps = m.steps.slice().sort(function (a, b) { return (stepStart(m, a) || 0) - (stepStart(m, b) || 0); });
    var shown = steps.slice(0, MAX_ROWS), rows, quota, budget = MAX_PROC_BARS, bars = 0, wanted = 0;
    if (shown.length) {
      /* Each step its share of the process bars, so that the first steps do not take them all. */
      quota = Math.max(6, Math.floor(MAX_PROC_BARS / shown.length));
      rows = shown.map(function (st) {
        var procs = m.byStep.get(st.id) || [];
        wanted += procs.length;
        var take = procs.slice(0, Math.min(quota, budget));
        budget -= take.length;
        return { step: st, procs: take };
      });
    } else {
      rows = [];
      for (var i = 0; i < m.n && i < MAX_ROWS; i++) rows.push({ proc: i });
    }
    rows.forEach(function (r) { bars += r.procs ? r.procs.length : 0; });
    var controls = el('div', 'controls');
    var bIn = el('button', null, 'zoom in'), bOut = el('button', null, 'zoom out'), bAll = el('button', null, 'whole run');
    var range = el('span', 'note');
    bIn.setAttribute('id', 'zoom-in');
    bOut.setAttribute('id', 'zoom-out');
    bAll.setAttribute('id', 'zoom-all');
    range.setAttribute('id', 'timeline-range');
    controls.appendChild(bIn); controls.appendChild(bOut); controls.appendChild(bAll); controls.appendChild(range);
    s.appendChild(controls);
    if (!shown.length) note(s, 'This run has no steps: its processes are shown instead.');
    var LABEL = 220, W = 1200, ROW = 22, TOP = 16;
    var H = TOP + rows.length * ROW + 6;
    var root = svg('svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, id: 'timeline-svg' });
    s.appendChild(root);
    if (steps.length > shown.length) note(s, count(shown.length) + ' of ' + count(steps.length) + ' steps drawn.', 'caps');
    if (!shown.length && m.n > rows.length) note(s, count(rows.length) + ' of ' + count(m.n) + ' processes drawn.', 'caps');
    if (wanted > bars)
      note(s, count(bars) + ' of ' + count(wanted) + ' process bars drawn (at most ' + count(quota) +
        ' per step, the first to start).', 'caps');

    function paint() {
      while (root.firstChild) root.removeChild(root.firstChild);
      var v0 = view[0], v1 = view[1], scale = (W - LABEL - 4) / (v1 - v0);
      var axis = svg('g', { 'class': 'axis' });
      drawAxis(axis, LABEL, W - 4, v0, v1, 0, H);
      root.appendChild(axis);
      function xOf(t) { return LABEL + Math.max(-1, Math.min(W - LABEL, (t - v0) * scale)); }
      rows.forEach(function (row, i) {
        var y = TOP + i * ROW, st = row.step, a, b, text, state, cls;
        if (st) {
          a = stepStart(m, st); b = stepEnd(m, st);
          text = str(st.name || st.id);
          state = m.meta.get(st).state;
          cls = 'step-bar ' + stateClass(state) + (m.meta.get(st).flagged ? ' step-flagged' : '') +
            (stateClass(state) === 'st-running' ? ' step-running' : '');
        } else {
          a = pStart(m, row.proc); b = pEnd(m, row.proc);
          text = str(m.pid[row.proc]) + ' ' + pName(m, row.proc);
          state = pFailed(m, row.proc) ? 'failed' : b === null ? 'running' : 'succeeded';
          cls = 'proc-row-bar ' + stateClass(state);
        }
        if (a === null) a = 0;
        if (b === null) b = T;
        var job = st ? obj(st.job) : {}, qa = num(job.submitted_ns) !== null ? job.submitted_ns - m.t0 : null;
        if (qa !== null && qa < a) { /* its time in the scheduler's queue, before it started */
          var qbar = svg('rect', { x: xOf(qa), y: y + 6, width: Math.max(1, xOf(a) - xOf(qa)), height: ROW - 12,
                                   'class': 'queue-bar' });
          var qt = svg('title', {});
          qt.textContent = text + ': job ' + str(job.slurm_job_id) + ' queued ' + fmtDur(a - qa);
          qbar.appendChild(qt);
          root.appendChild(qbar);
        }
        var label = svg('text', { x: 4, y: y + 14 });
        label.textContent = text;
        root.appendChild(label);
        var bar = svg('rect', { x: xOf(a), y: y + 2, width: Math.max(1, xOf(b) - xOf(a)), height: ROW - 4, 'class': cls });
        if (st) bar.setAttribute('data-step', str(st.id));
        var tip = svg('title', {});
        tip.textContent = text + ': ' + state + ', ' + fmtDur(b - a);
        bar.appendChild(tip);
        root.appendChild(bar);
        if (st && stateClass(state) === 'st-failed') {
          var mark = svg('text', { x: Math.min(xOf(b) + 2, W - 12), y: y + 15, 'class': 'fail-mark' });
          mark.textContent = '\u2716';
          root.appendChild(mark);
        }
        (row.procs || []).forEach(function (p, k) {
          var pa = pStart(m, p), pb = pEnd(m, p);
          if (pa === null) pa = a;
          if (pb === null) pb = b;
          var lanes = Math.min(row.procs.length, 6), lane = k % lanes, h = Math.max(1, (ROW - 8) / lanes);
          var pr = svg('rect', { x: xOf(pa), y: y + 4 + lane * h, width: Math.max(1, xOf(pb) - xOf(pa)),
                                 height: Math.max(1, h - 1), 'class': 'proc-bar' + (pFailed(m, p) ? ' failed' : '') });
          var pt = svg('title', {});
          pt.textContent = str(m.pid[p]) + ' ' + pName(m, p) + ': ' + fmtDur(pb - pa);
          pr.appendChild(pt);
          root.appendChild(pr);
        });
      });
      range.textContent = ' showing ' + fmtDur(v0) + ' to ' + fmtDur(v1) + ' (' + fmtDur(v1 - v0) + ')';
    }
    /* Zoom by factor f around time c (from the start); never below a millisecond nor beyond the run. */
    function zoom(f, c) {
      var w = Math.min(T, Math.max(1e6, (view[1] - view[0]) * f));
      var a = c - (c - view[0]) * w / (view[1] - view[0]);
      a = Math.max(0, Math.min(a, T - w));
      view = [a, a + w];
      paint();
    }
    bIn.addEventListener('click', function () { zoom(0.5, (view[0] + view[1]) / 2); });
    bOut.addEventListener('click', function () { zoom(2, (view[0] + view[1]) / 2); });
    bAll.addEventListener('click', function () { view = [0, T]; paint(); });
    root.addEventListener('wheel', function (e) {
      var box = root.getBoundingClientRect(), x = (e.clientX - box.left) * W / box.width;
      if (x < LABEL) return;
      e.preventDefault();
      zoom(e.deltaY < 0 ? 0.8 : 1.25, view[0] + (x - LABEL) * (view[1] - view[0]) / (W - LABEL - 4));
    }, { passive: false });
    paint();
  }

  /* ---- resource use: CPU cores and memory over the run, as the data's slices say --------------------- */
  /* The data keeps every slice within the host's CPUs and memory (view/html_data.c: the sums smear past
   * them) and counts the slices it clamped; the legend says so, only when it happened. */
  function drawResources(m, s) {
    var r = m.resources, cpu = arr(r.cpu_ns), mem = arr(r.rss_bytes), n = cpu.length;
    var hostCpus = num(r.host_cpus), hostMem = num(r.host_memory_bytes);
    var clamped = [];
    if (num(r.cpu_clamped) && hostCpus !== null)
      clamped.push(['cpu-clamp', 'legend-cpu', 'CPU clamped to the host\'s ' + cpusText(hostCpus) + ' in ' +
        count(r.cpu_clamped) + ' of ' + count(n) + ' slices']);
    if (num(r.rss_clamped) && hostMem !== null)
      clamped.push(['mem-clamp', 'legend-mem', 'memory clamped to the host\'s ' + fmtBytes(hostMem) + ' in ' +
        count(r.rss_clamped) + ' of ' + count(n) + ' slices']);
    var w = num(r.bin_ns) || m.T / Math.max(n, 1), W = 1200, L = 60, R = 70, T = 10, B = 20;
    var H = 180 + 16 * clamped.length, plotH = 180;
    var cores = cpu.map(function (c) { return (num(c) || 0) / w; });
    mem = mem.map(function (v) { return num(v) || 0; });
    var maxC = Math.max.apply(null, cores.concat([0.01])), maxM = Math.max.apply(null, mem.concat([1]));
    var root = svg('svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, id: 'resources-svg' });
    var axis = svg('g', { 'class': 'axis' });
    drawAxis(axis, L, W - R, 0, Math.max(w * n, 1), plotH - B, B);
    root.appendChild(axis);
    function pts(vals, max) {
      return vals.map(function (v, i) {
        var x = L + (i + 0.5) * (W - L - R) / n, y = T + (plotH - T - B) * (1 - v / max);
        return x.toFixed(1) + ',' + y.toFixed(1);
      }).join(' ');
    }
    root.appendChild(svg('polyline', { points: pts(cores, maxC), 'class': 'cpu-line', id: 'cpu-line' }));
    root.appendChild(svg('polyline', { points: pts(mem, maxM), 'class': 'mem-line', id: 'mem-line' }));
    var lc = svg('text', { x: 4, y: T + 10, 'class': 'legend-cpu' });
    lc.textContent = 'CPU ' + maxC.toFixed(2) + ' cores' + (hostCpus !== null ? ' (host: ' + cpusText(hostCpus) + ')' : '');
    root.appendChild(lc);
    var lm = svg('text', { x: W - R + 4, y: T + 10, 'class': 'legend-mem' });
    lm.textContent = 'mem ' + fmtBytes(maxM);
    root.appendChild(lm);
    /* Under the time axis: what was clamped, one line each. */
    clamped.forEach(function (c, i) {
      var t = svg('text', { x: L, y: plotH + 12 + 16 * i, 'class': 'legend-clamp ' + c[1], id: c[0] });
      t.textContent = c[2];
      root.appendChild(t);
    });
    s.appendChild(root);
    note(s, 'CPU cores (orange) and memory (blue, the sum of the processes\' resident sets) in ' + n +
      ' slices of ' + fmtDur(w) + ': each process\'s CPU between its samples, or its CPU time spread over its ' +
      'life and its peak held when it has none (short processes have no samples). ' +
      (hostCpus !== null || hostMem !== null
        ? 'No slice shows more than the host has: processes sampled at slightly different instants can sum ' +
          'beyond it, and the legend says where they were clamped.'
        : 'This run does not say what its host has: the sums are shown as they are.'));
  }

  /* ---- tables --------------------------------------------------------------------------------------- */
  /* A step's peak memory as the data gives it: the host's at most (step_stats), else the step's own. */
  function stepPeak(m, x) {
    var st = m.meta.get(x).stats;
    return 'peak_rss_bytes' in st ? num(st.peak_rss_bytes) : num(x.peak_rss_bytes);
  }

  /* Says how many rows of a table have their peak memory clamped to the host's (marked "(clamped)"). */
  function clampNote(s, m, n, what, why, id) { /* what: [singular, plural] */
    var host = num(m.resources.host_memory_bytes);
    if (!n || host === null) return;
    var p = el('p', 'note clamp', 'Peak memory of ' + count(n) + ' ' + what[n === 1 ? 0 : 1] + ' clamped to the host\'s ' +
      fmtBytes(host) + ' (marked): ' + why + '.');
    p.setAttribute('id', id);
    s.appendChild(p);
  }

  function drawSteps(m, s) {
    var c = m.counts;
    if (!m.steps.length) { note(s, 'No steps.'); return; }
    if (num(c.steps) !== null && c.steps > m.steps.length)
      note(s, count(m.steps.length) + ' of ' + count(c.steps) + ' steps are in this file.', 'caps');
    var cols = [
      { title: 'name', get: function (x) { return x.name || x.id; } },
      { title: 'tools', get: function (x) { return arr(x.tools).map(str).join(', '); } },
      { title: 'state', get: function (x) { return m.meta.get(x).state; } },
      { title: 'duration', num: true, fmt: fmtDur,
        get: function (x) { return num(x.start_ns) !== null && num(x.end_ns) !== null ? x.end_ns - x.start_ns : null; } },
      { title: 'CPU', num: true, fmt: fmtDur, get: function (x) { return num(x.cpu_ns); } },
      { title: 'peak memory', num: true, fmt: fmtBytes, get: function (x) { return stepPeak(m, x); },
        suffix: function (x) { return m.meta.get(x).stats.peak_rss_clamped === true ? ' (clamped)' : ''; } },
      { title: 'processes', num: true,
        get: function (x) { return num(x.processes) !== null ? x.processes : num(m.meta.get(x).stats.processes); } },
      { title: 'failed processes', num: true, get: function (x) { return num(m.meta.get(x).stats.failed); } }
    ];
    /* The allocation (a CPU or memory limit, a SLURM job's), where any step ran under one. */
    if (m.steps.some(function (x) { return num(x.cpu_limit_cores) !== null || num(x.memory_limit_bytes) !== null; }))
      cols.push({ title: 'CPU limit', num: true, get: function (x) { return num(x.cpu_limit_cores); } },
                { title: 'memory limit', num: true, fmt: fmtBytes, get: function (x) { return num(x.memory_limit_bytes); } });
    /* A cluster job's step: its job, its node, and how long it waited in the scheduler's queue. */
    if (m.steps.some(function (x) { return x.job && typeof x.job === 'object'; }))
      cols.push({ title: 'job', get: function (x) { var j = obj(x.job); return j.slurm_job_id ? str(j.slurm_job_id) +
                    (j.host ? ' on ' + str(j.host) : '') : ''; } },
                { title: 'queue wait', num: true, fmt: fmtDur, get: function (x) { return num(obj(x.job).queue_wait_ns); } });
    sortableTable(s, cols, m.steps.slice(), function (tr, x) {
      var st = stateClass(m.meta.get(x).state);
      tr.setAttribute('class', 'step-row' + (st === 'st-failed' ? ' failed' : '') + (m.meta.get(x).flagged ? ' step-flagged' : '') +
        (st === 'st-running' ? ' step-running' : ''));
      tr.setAttribute('data-step', str(x.id));
    }, 'steps');
    clampNote(s, m, m.steps.filter(function (x) { return m.meta.get(x).stats.peak_rss_clamped === true; }).length,
      ['step', 'steps'], 'their processes\' resident sets, sampled at slightly different instants with shared pages in ' +
      'each, summed beyond what the host has', 'steps-clamp');
  }

  function drawTools(m, s) {
    var c = m.counts, list = m.tools.filter(function (t) { return t && typeof t === 'object'; });
    if (!list.length) { note(s, 'No processes.'); return; }
    if (num(c.tools) !== null && c.tools > list.length)
      note(s, count(list.length) + ' of ' + count(c.tools) + ' tools are in this file (those with the most CPU time).', 'caps');
    sortableTable(s, [
      { title: 'tool', get: function (x) { return typeof x.tool === 'string' ? x.tool : '(unnamed)'; } },
      { title: 'processes', num: true, get: function (x) { return num(x.processes); } },
      { title: 'failed', num: true, get: function (x) { return num(x.failed); } },
      { title: 'wall (sum)', num: true, fmt: fmtDur, get: function (x) { return num(x.wall_ns); } },
      { title: 'CPU', num: true, fmt: fmtDur, get: function (x) { return num(x.cpu_ns); } },
      { title: 'peak memory', num: true, fmt: fmtBytes, get: function (x) { return num(x.peak_rss_bytes); },
        suffix: function (x) { return x.peak_rss_clamped === true ? ' (clamped)' : ''; } }
    ], list, function (tr, x) { if (num(x.failed)) tr.setAttribute('class', 'failed'); }, 'tools');
    clampNote(s, m, list.filter(function (x) { return x.peak_rss_clamped === true; }).length, ['tool', 'tools'],
      'a process of each said a peak beyond what the host has', 'tools-clamp');
  }

  function signalDetail(g) {
    if (typeof g.detail === 'string') return g.detail;
    var rest = {};
    Object.keys(g).forEach(function (k) { if (['kind', 'step', 'tool'].indexOf(k) < 0) rest[k] = g[k]; });
    return JSON.stringify(rest);
  }

  function drawSignals(m, s) {
    var c = m.counts;
    if (!m.signals.length) { note(s, 'No signals: nothing failed, was killed, stalled or waited long.'); return; }
    if (num(c.signals) !== null && c.signals > m.signals.length)
      note(s, count(m.signals.length) + ' of ' + count(c.signals) + ' signals are in this file.', 'caps');
    sortableTable(s, [
      { title: 'kind', get: function (g) { return g.kind; } },
      { title: 'step', get: function (g) { return g.step; } },
      { title: 'tool', get: function (g) { return g.tool; } },
      { title: 'detail', cls: 'detail', get: signalDetail }
    ], m.signals.slice(), function (tr) { tr.setAttribute('class', 'signal signal-row'); }, 'signals');
  }

  function drawTune(m, s) {
    var t = m.rep.tune;
    if (!t || typeof t !== 'object') {
      note(s, 'No tuning data: tracer report --db FILE RUN --html adds it for a run of a known pipeline.');
      return;
    }
    var rec = arr(t.recommendations).filter(function (x) { return x && typeof x === 'object'; });
    if (rec.length) {
      s.appendChild(el('h3', null, 'Recommendations (over ' + str(t.window_runs) + ' runs)'));
      sortableTable(s, [
        { title: 'step', get: function (x) { return x.step; } },
        { title: 'runs', num: true, get: function (x) { return num(x.runs); } },
        { title: 'class', get: function (x) { return x['class']; } },
        { title: 'confidence', get: function (x) { return x.confidence; } },
        { title: 'CPUs', num: true, get: function (x) { return num(x.cpus); } },
        { title: 'memory', num: true, fmt: fmtBytes, get: function (x) { return num(x.memory_bytes); } },
        { title: 'time (s)', num: true, get: function (x) { return num(x.time_s); } }
      ], rec, null, 'recommendations');
    } else note(s, 'No recommendations.');
    if (t.cost && typeof t.cost === 'object') {
      s.appendChild(el('h3', null, 'Cost'));
      s.appendChild(kvTable(Object.keys(t.cost).map(function (k) { return [k, str(t.cost[k])]; })));
    }
  }

  /* ---- the process tree: collapsible, at most MAX_ROWS nodes ------------------------------------- */
  function procLine(m, i) {
    var a = pStart(m, i), b = pEnd(m, i);
    var cmd = m.argv[i] ? m.argv[i].map(str).join(' ') : m.exe[i] >= 0 ? str(m.strings[m.exe[i]]) : '-';
    return str(m.pid[i]) + '  ' + pName(m, i) + '  ' + (a !== null && b !== null ? fmtDur(b - a) : '-') + '  ' +
      pEnding(m, i) + '  ' + cmd;
  }

  function drawTree(m, s) {
    var kids = [], roots = [], total = num(m.counts.processes) !== null ? m.counts.processes : m.n;
    for (var i = 0; i < m.n; i++) {
      var p = m.parent[i];
      if (num(p) !== null && p >= 0 && p < m.n && p !== i) (kids[p] = kids[p] || []).push(i);
      else roots.push(i);
    }
    var shown = 0, seen = [];
    /* Depth-first without recursion: a deep chain of processes cannot overflow the stack. */
    var stack = roots.slice().reverse().map(function (r) { return { p: r, parent: s, depth: 0 }; });
    while (stack.length && shown < MAX_ROWS) {
      var it = stack.pop(), q = it.p;
      if (seen[q]) continue;
      seen[q] = true;
      shown++;
      var ch = kids[q] || [], node, bad = pFailed(m, q);
      if (ch.length) {
        node = el('details', bad ? 'failed' : null);
        if (it.depth < 2) node.open = true;
        node.appendChild(el('summary', bad ? 'state-failed' : null, procLine(m, q) + '  (' + ch.length + ' children)'));
        for (var k = ch.length - 1; k >= 0; k--) stack.push({ p: ch[k], parent: node, depth: it.depth + 1 });
      } else {
        node = el('div', 'leaf' + (bad ? ' state-failed' : ''), procLine(m, q));
      }
      it.parent.appendChild(node);
    }
    if (!total) note(s, 'No processes.');
    else if (total > shown)
      note(s, count(shown) + ' of ' + count(total) + ' processes shown (the tree stops at ' + count(MAX_ROWS) +
        ' nodes' + (m.n < total ? '; this file lists ' + count(m.n) : '') + ').', 'caps');
  }

  function drawAgent(m, s) {
    var a = m.rep.agent;
    if (!a || typeof a !== 'object') { note(s, 'No agent figures.'); return; }
    var rows = [];
    if ('dropped' in a) rows.push(['dropped', str(a.dropped), num(a.dropped) ? 'state-failed' : null]);
    Object.keys(a).forEach(function (k) {
      if (k === 'dropped') return;
      var v = a[k];
      if (v && typeof v === 'object' && !Array.isArray(v))
        Object.keys(v).forEach(function (k2) { rows.push([k + '.' + k2, str(v[k2])]); });
      else rows.push([k, str(v)]);
    });
    s.appendChild(kvTable(rows));
    if (num(a.dropped)) note(s, 'Records were lost: some processes or figures may be missing from this report.');
  }

  var SECTIONS = [
    ['summary', 'Run', drawSummary], ['timeline', 'Timeline', drawTimeline], ['resources', 'Resource use', drawResources],
    ['steps', 'Steps', drawSteps], ['tools', 'Tools', drawTools], ['signals', 'Signals', drawSignals],
    ['tune', 'Tuning', drawTune], ['tree', 'Process tree', drawTree], ['agent', 'Agent health', drawAgent]
  ];

  /* The page data into root, replacing what was there. */
  function render(data, root) {
    while (root.firstChild) root.removeChild(root.firstChild);
    var header = el('header');
    root.appendChild(header);
    if (!data || typeof data !== 'object' || data.schema !== SCHEMA) {
      header.appendChild(el('h1', 'report-title', 'tracer run report'));
      root.appendChild(el('p', 'state-failed', 'This is not the data of a tracer page (' + SCHEMA + ').'));
      document.body.setAttribute('data-ready', '1');
      return;
    }
    var m = model(data), r = m.rep;
    header.appendChild(el('h1', 'report-title', 'tracer: ' + runLabel(r)));
    header.appendChild(el('p', 'subtitle', fmtTime(r.start_ns) + ', ' + runState(r)));
    SECTIONS.forEach(function (d) {
      var s = el('section');
      s.setAttribute('id', d[0]);
      s.appendChild(el('h2', null, d[1]));
      root.appendChild(s);
      d[2](m, s);
    });
    document.body.setAttribute('data-ready', '1');
  }

  window.tracerReport = { render: render };

  var embedded = document.getElementById('run-data'), target = document.getElementById('report');
  if (embedded && target) {
    var data;
    try {
      data = JSON.parse(embedded.textContent);
    } catch (e) {
      target.appendChild(el('p', 'state-failed', 'The run data of this page cannot be read: ' + e.message));
      return;
    }
    render(data, target);
    if (data && data.schema === SCHEMA) document.title = 'tracer: ' + runLabel(obj(data.report));
  }
})();
