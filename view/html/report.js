/* tracer's HTML run report (docs/html.md). Everything shown came from a host: it reaches the page only as
 * text (textContent, setAttribute of numbers and fixed class names), never as markup: nothing here parses
 * HTML or runs code from a string (tests/test_html.c checks), and nothing makes a request (the page's
 * Content-Security-Policy allows none). */
'use strict';
(function () {
  var MAX_ROWS = 2000;      /* rows of any table, nodes of the process tree */
  var MAX_PROC_BARS = 5000; /* process bars in the timeline */
  var SVG_NS = 'http://www.w3.org/2000/svg'; /* an XML namespace name, never fetched */
  var data;

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
  function section(id) { return document.getElementById(id); }
  function note(parent, text) { parent.appendChild(el('p', 'note', text)); }
  function num(v) { return typeof v === 'number' && isFinite(v) ? v : null; }
  function str(v) {
    if (v === null || v === undefined) return '-';
    if (typeof v === 'object') return JSON.stringify(v);
    return String(v);
  }

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
    return new Date(ns / 1e6).toISOString().replace('T', ' ').replace('Z', ' UTC');
  }
  function procCpu(p) {
    if (num(p.cpu_ns) !== null) return p.cpu_ns;
    if (num(p.cpu_user_ns) !== null || num(p.cpu_sys_ns) !== null) return (p.cpu_user_ns || 0) + (p.cpu_sys_ns || 0);
    return null;
  }
  function procFailed(p) {
    return p.oom_killed === true || (num(p.exit_code) !== null && p.exit_code !== 0) ||
      (num(p.signal) !== null && p.signal !== 0 && p.signal !== 13);
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
  function runState(d) {
    if (typeof d.state === 'string' && d.state) return d.state;
    if (num(d.exit_code) === 0) return 'succeeded';
    if (num(d.exit_code) !== null || (num(d.signal) || 0) > 0) return 'failed';
    return 'unknown';
  }
  function arr(v) { return Array.isArray(v) ? v : []; }

  /* A key/value table of [label, text] pairs. */
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

  /* A table sortable by any column: cols [{title, get (row -> value), fmt (value -> text), num}]. */
  function sortableTable(parent, cols, rows, rowClass, what) {
    var t = el('table', 'sortable'), thead = el('thead'), tbody = el('tbody'), htr = el('tr');
    var key = -1, desc = false;
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
    var more = el('p', 'note');
    function fill() {
      while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
      rows.slice(0, MAX_ROWS).forEach(function (r) {
        var tr = el('tr', rowClass ? rowClass(r) : null);
        cols.forEach(function (c) {
          var v = c.get(r);
          tr.appendChild(el('td', c.num ? 'num' : (c.cls || null), c.fmt ? c.fmt(v) : str(v)));
        });
        tbody.appendChild(tr);
      });
      more.textContent = rows.length > MAX_ROWS ?
        (rows.length - MAX_ROWS) + ' more ' + what + ' not shown (the first ' + MAX_ROWS + ' in this order are)' : '';
    }
    fill();
    parent.appendChild(t);
    parent.appendChild(more);
  }

  /* ---- the run ------------------------------------------------------------------------ */
  function runLabel(d) {
    var r = d.run || {};
    if (typeof r.pipeline === 'string' && r.pipeline) return r.pipeline;
    return arr(d.command).map(str).join(' ') || 'run';
  }

  function drawSummary(d) {
    var s = section('summary'), r = d.run || {}, h = d.host || {};
    section('title').textContent = 'tracer: ' + runLabel(d);
    document.title = 'tracer: ' + runLabel(d);
    section('subtitle').textContent = fmtTime(d.start_ns) + ', ' + runState(d);
    var state = runState(d);
    var rows = [
      ['command', arr(d.command).map(str).join(' ')],
      ['state', state, stateClass(state) === 'st-failed' ? 'state-failed' : null],
      ['exit', num(d.exit_code) !== null ? String(d.exit_code) : (num(d.signal) ? 'signal ' + d.signal : '-')],
      ['start', fmtTime(d.start_ns)],
      ['end', fmtTime(d.end_ns)],
      ['duration', num(d.start_ns) !== null && num(d.end_ns) !== null ? fmtDur(d.end_ns - d.start_ns) : '-'],
      ['processes', String(arr(d.processes).length)],
      ['steps', String(arr(d.steps).length)],
      ['signals', String(arr(d.signals).length)]
    ];
    if (r.pipeline) rows.push(['pipeline', str(r.pipeline)]);
    if (r.engine) rows.push(['engine', str(r.engine)]);
    if (r.run_id) rows.push(['pipeline run', str(r.run_id)]);
    if (r.key) rows.push(['run key', str(r.key)]);
    if (typeof d.host === 'string') rows.push(['host', d.host]);
    else {
      if (num(h.cpus) !== null) rows.push(['host CPUs', String(h.cpus)]);
      if (num(h.memory_bytes) !== null) rows.push(['host memory', fmtBytes(h.memory_bytes)]);
      if (h.instance_type) rows.push(['instance type', str(h.instance_type)]);
    }
    s.appendChild(kvTable(rows));
  }

  /* The time span of the run: its own start and end, widened to what its steps and processes cover. */
  function runSpan(d) {
    var t0 = num(d.start_ns), t1 = num(d.end_ns);
    function widen(a, b) {
      if (num(a) !== null) { t0 = t0 === null ? a : Math.min(t0, a); t1 = t1 === null ? a : Math.max(t1, a); }
      if (num(b) !== null) { t1 = t1 === null ? b : Math.max(t1, b); }
    }
    arr(d.steps).forEach(function (s) { widen(s.start_ns, s.end_ns); });
    arr(d.processes).forEach(function (p) { widen(p.start_ns, p.end_ns); });
    if (t0 === null) t0 = 0;
    if (t1 === null || t1 <= t0) t1 = t0 + 1e6;
    return [t0, t1];
  }

  /* Tick spacing: 1, 2 or 5 times a power of ten nanoseconds, about 8 ticks across. */
  function tickStep(span) {
    var raw = span / 8, p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1))));
    var m = raw / p;
    return (m < 2 ? 1 : m < 5 ? 2 : 5) * p;
  }

  function drawAxis(g, x0, x1, v0, v1, t0, top, height) {
    var step = tickStep(v1 - v0), first = Math.ceil((v0 - t0) / step) * step + t0;
    var scale = (x1 - x0) / (v1 - v0);
    for (var t = first; t <= v1; t += step) {
      var x = x0 + (t - v0) * scale;
      g.appendChild(svg('line', { x1: x, x2: x, y1: top, y2: top + height }));
      var label = svg('text', { x: x + 2, y: top + 11 });
      label.textContent = fmtDur(t - t0);
      g.appendChild(label);
    }
  }

  /* ---- the timeline: a bar per step, its processes within; zoom down to milliseconds --------------- */
  function drawTimeline(d) {
    var s = section('timeline');
    /* Times relative to the run's start: nanoseconds since 1970 are beyond a double's exact integers. */
    var span = runSpan(d), t0 = span[0], T = span[1] - span[0];
    var view = [0, T];
    var steps = arr(d.steps).slice().sort(function (a, b) { return (a.start_ns || 0) - (b.start_ns || 0); });
    var shown = steps.slice(0, MAX_ROWS);
    var byStep = {};
    arr(d.processes).forEach(function (p) {
      if (typeof p.step === 'string') (byStep[p.step] = byStep[p.step] || []).push(p);
    });
    var rows = shown.length ? shown.map(function (st) { return { step: st, procs: byStep[st.id] || [] }; }) :
      arr(d.processes).slice(0, MAX_ROWS).map(function (p) { return { proc: p }; });
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
    if (steps.length > shown.length) note(s, (steps.length - shown.length) + ' more steps not drawn.');

    function render() {
      while (root.firstChild) root.removeChild(root.firstChild);
      var v0 = view[0], v1 = view[1], scale = (W - LABEL - 4) / (v1 - v0);
      var axis = svg('g', { 'class': 'axis' });
      drawAxis(axis, LABEL, W - 4, v0, v1, 0, 0, H);
      root.appendChild(axis);
      function xOf(t) { return LABEL + Math.max(-1, Math.min(W - LABEL, (t - t0 - v0) * scale)); }
      var procBars = 0;
      rows.forEach(function (row, i) {
        var y = TOP + i * ROW, item = row.step || row.proc;
        var a = num(item.start_ns) !== null ? item.start_ns : t0, b = num(item.end_ns) !== null ? item.end_ns : t0 + T;
        var label = svg('text', { x: 4, y: y + 14 });
        label.textContent = row.step ? str(item.name || item.id) : str(item.pid) + ' ' + str(item.tool);
        root.appendChild(label);
        var state = row.step ? stepState(item) : (procFailed(item) ? 'failed' : 'succeeded');
        var bar = svg('rect', { x: xOf(a), y: y + 2, width: Math.max(1, xOf(b) - xOf(a)), height: ROW - 4,
                                'class': (row.step ? 'step-bar ' : 'proc-row-bar ') + stateClass(state) });
        var tip = svg('title', {});
        tip.textContent = label.textContent + ': ' + state + ', ' + fmtDur(b - a);
        bar.appendChild(tip);
        root.appendChild(bar);
        if (row.step && stateClass(state) === 'st-failed') {
          var mark = svg('text', { x: Math.min(xOf(b) + 2, W - 12), y: y + 15, 'class': 'fail-mark' });
          mark.textContent = '\u2716';
          root.appendChild(mark);
        }
        (row.procs || []).forEach(function (p, k) {
          if (procBars >= MAX_PROC_BARS) return;
          var pa = num(p.start_ns) !== null ? p.start_ns : a, pb = num(p.end_ns) !== null ? p.end_ns : b;
          var lanes = Math.min(row.procs.length, 6), lane = k % lanes, h = Math.max(1, (ROW - 8) / lanes);
          var pr = svg('rect', { x: xOf(pa), y: y + 4 + lane * h, width: Math.max(1, xOf(pb) - xOf(pa)),
                                 height: Math.max(1, h - 1), 'class': 'proc-bar' + (procFailed(p) ? ' failed' : '') });
          var pt = svg('title', {});
          pt.textContent = str(p.pid) + ' ' + str(p.tool) + ': ' + fmtDur(pb - pa);
          pr.appendChild(pt);
          root.appendChild(pr);
          procBars++;
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
      render();
    }
    bIn.addEventListener('click', function () { zoom(0.5, (view[0] + view[1]) / 2); });
    bOut.addEventListener('click', function () { zoom(2, (view[0] + view[1]) / 2); });
    bAll.addEventListener('click', function () { view = [0, T]; render(); });
    root.addEventListener('wheel', function (e) {
      var box = root.getBoundingClientRect(), x = (e.clientX - box.left) * W / box.width;
      if (x < LABEL) return;
      e.preventDefault();
      zoom(e.deltaY < 0 ? 0.8 : 1.25, view[0] + (x - LABEL) * (view[1] - view[0]) / (W - LABEL - 4));
    }, { passive: false });
    render();
  }

  /* ---- resource use: CPU cores and memory summed over the processes --------------------------------- */
  /* Bins over the run: a process's series where it has one, else its totals spread over its lifetime. */
  function resourceBins(d, n) {
    var span = runSpan(d), t0 = span[0], t1 = span[1], w = (t1 - t0) / n;
    var cpu = new Array(n).fill(0), mem = new Array(n).fill(0);
    function bin(t) { return Math.max(0, Math.min(n - 1, Math.floor((t - t0) / w))); }
    arr(d.processes).forEach(function (p) {
      var s = p.series, a = num(p.start_ns) !== null ? p.start_ns : t0, b = num(p.end_ns) !== null ? p.end_ns : t1;
      if (s && Array.isArray(s.t_ns) && s.t_ns.length) {
        var peak = {};
        s.t_ns.forEach(function (t, i) {
          var k = bin(t);
          cpu[k] += num(arr(s.cpu_ns)[i]) || 0;
          peak[k] = Math.max(peak[k] || 0, num(arr(s.rss_bytes)[i]) || 0);
        });
        for (var k in peak) if (Object.prototype.hasOwnProperty.call(peak, k)) mem[k] += peak[k];
        return;
      }
      var c = procCpu(p) || 0, ka = bin(a), kb = bin(b), per = c / (kb - ka + 1);
      for (var j = ka; j <= kb; j++) { cpu[j] += per; mem[j] += num(p.peak_rss_bytes) || 0; }
    });
    return { t0: t0, w: w, cores: cpu.map(function (c) { return c / w; }), mem: mem };
  }

  function drawResources(d) {
    var s = section('resources'), n = 200, W = 1200, H = 180, L = 60, R = 70, T = 10, B = 20;
    var r = resourceBins(d, n);
    var maxC = Math.max.apply(null, r.cores.concat([0.01])), maxM = Math.max.apply(null, r.mem.concat([1]));
    var root = svg('svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, id: 'resources-svg' });
    var axis = svg('g', { 'class': 'axis' });
    drawAxis(axis, L, W - R, r.t0, r.t0 + r.w * n, r.t0, H - B, B);
    root.appendChild(axis);
    function pts(vals, max) {
      return vals.map(function (v, i) {
        var x = L + (i + 0.5) * (W - L - R) / n, y = T + (H - T - B) * (1 - v / max);
        return x.toFixed(1) + ',' + y.toFixed(1);
      }).join(' ');
    }
    root.appendChild(svg('polyline', { points: pts(r.cores, maxC), 'class': 'cpu-line', id: 'cpu-line' }));
    root.appendChild(svg('polyline', { points: pts(r.mem, maxM), 'class': 'mem-line', id: 'mem-line' }));
    var lc = svg('text', { x: 4, y: T + 10, 'class': 'legend-cpu' });
    lc.textContent = 'CPU ' + maxC.toFixed(2) + ' cores';
    root.appendChild(lc);
    var lm = svg('text', { x: W - R + 4, y: T + 10, 'class': 'legend-mem' });
    lm.textContent = 'mem ' + fmtBytes(maxM);
    root.appendChild(lm);
    s.appendChild(root);
    note(s, 'CPU cores (orange) and memory (blue, the sum of the processes\' resident sets) in ' + n +
      ' slices of ' + fmtDur(r.w) + '; processes without samples count their totals evenly over their lifetime.');
  }

  /* ---- tables --------------------------------------------------------------------------------------- */
  function drawSteps(d) {
    var s = section('steps'), steps = arr(d.steps).slice();
    if (!steps.length) { note(s, 'No steps.'); return; }
    sortableTable(s, [
      { title: 'name', get: function (x) { return x.name || x.id; } },
      { title: 'tools', get: function (x) { return arr(x.tools).map(str).join(', '); } },
      { title: 'state', get: stepState },
      { title: 'duration', num: true, fmt: fmtDur,
        get: function (x) { return num(x.start_ns) !== null && num(x.end_ns) !== null ? x.end_ns - x.start_ns : null; } },
      { title: 'CPU', num: true, fmt: fmtDur, get: function (x) { return num(x.cpu_ns); } },
      { title: 'peak memory', num: true, fmt: fmtBytes, get: function (x) { return num(x.peak_rss_bytes); } },
      { title: 'processes', num: true, get: function (x) { return num(x.processes); } }
    ], steps, function (x) { return stateClass(stepState(x)) === 'st-failed' ? 'failed step-row' : 'step-row'; }, 'steps');
  }

  function drawTools(d) {
    var s = section('tools'), by = {}, list = [];
    arr(d.processes).forEach(function (p) {
      var name = typeof p.tool === 'string' ? p.tool : '(unnamed)', t = by[name];
      if (!t) { t = by[name] = { tool: name, n: 0, failed: 0, cpu: 0, wall: 0, peak: null }; list.push(t); }
      t.n++;
      if (procFailed(p)) t.failed++;
      t.cpu += procCpu(p) || 0;
      if (num(p.start_ns) !== null && num(p.end_ns) !== null) t.wall += p.end_ns - p.start_ns;
      if (num(p.peak_rss_bytes) !== null) t.peak = Math.max(t.peak || 0, p.peak_rss_bytes);
    });
    if (!list.length) { note(s, 'No processes.'); return; }
    list.sort(function (a, b) { return b.cpu - a.cpu; });
    sortableTable(s, [
      { title: 'tool', get: function (x) { return x.tool; } },
      { title: 'processes', num: true, get: function (x) { return x.n; } },
      { title: 'failed', num: true, get: function (x) { return x.failed; } },
      { title: 'wall (sum)', num: true, fmt: fmtDur, get: function (x) { return x.wall; } },
      { title: 'CPU', num: true, fmt: fmtDur, get: function (x) { return x.cpu; } },
      { title: 'peak memory', num: true, fmt: fmtBytes, get: function (x) { return x.peak; } }
    ], list, null, 'tools');
  }

  function signalDetail(g) {
    if (typeof g.detail === 'string') return g.detail;
    var rest = {};
    Object.keys(g).forEach(function (k) { if (['kind', 'step', 'tool'].indexOf(k) < 0) rest[k] = g[k]; });
    return JSON.stringify(rest);
  }

  function drawSignals(d) {
    var s = section('signals'), sig = arr(d.signals).filter(function (g) { return g && typeof g === 'object'; });
    if (!sig.length) { note(s, 'No signals: nothing failed, was killed, stalled or waited long.'); return; }
    sortableTable(s, [
      { title: 'kind', get: function (g) { return g.kind; } },
      { title: 'step', get: function (g) { return g.step; } },
      { title: 'tool', get: function (g) { return g.tool; } },
      { title: 'detail', cls: 'detail', get: signalDetail }
    ], sig, function () { return 'signal-row'; }, 'signals');
  }

  function drawTune(d) {
    var s = section('tune'), t = d.tune;
    if (!t || typeof t !== 'object') {
      note(s, 'No tuning data: tracer report --db FILE RUN --html adds it for a run of a known pipeline.');
      return;
    }
    var rec = arr(t.recommendations);
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
  function procLine(p) {
    var argv = Array.isArray(p.argv) ? p.argv.map(str).join(' ') : str(p.exe);
    var end = p.oom_killed === true ? 'OOM-killed' : num(p.signal) ? 'signal ' + p.signal :
      num(p.exit_code) !== null ? 'exit ' + p.exit_code : 'running';
    var dur = num(p.start_ns) !== null && num(p.end_ns) !== null ? fmtDur(p.end_ns - p.start_ns) : '-';
    return str(p.pid) + '  ' + str(p.tool) + '  ' + dur + '  ' + end + '  ' + argv;
  }

  function drawTree(d) {
    var s = section('tree'), procs = arr(d.processes), kids = {}, known = {}, roots = [];
    procs.forEach(function (p) { known[p.pid] = true; });
    procs.forEach(function (p) {
      if (num(p.ppid) !== null && known[p.ppid] && p.ppid !== p.pid) (kids[p.ppid] = kids[p.ppid] || []).push(p);
      else roots.push(p);
    });
    var shown = 0, seen = {};
    /* Depth-first without recursion: a deep chain of processes cannot overflow the stack. */
    var stack = roots.slice().reverse().map(function (p) { return { p: p, parent: s, depth: 0 }; });
    while (stack.length && shown < MAX_ROWS) {
      var it = stack.pop(), p = it.p;
      if (seen[p.pid]) continue;
      seen[p.pid] = true;
      shown++;
      var ch = kids[p.pid] || [], node;
      if (ch.length) {
        node = el('details', procFailed(p) ? 'failed' : null);
        if (it.depth < 2) node.open = true;
        node.appendChild(el('summary', procFailed(p) ? 'state-failed' : null, procLine(p) + '  (' + ch.length + ' children)'));
        for (var i = ch.length - 1; i >= 0; i--) stack.push({ p: ch[i], parent: node, depth: it.depth + 1 });
      } else {
        node = el('div', 'leaf' + (procFailed(p) ? ' state-failed' : ''), procLine(p));
      }
      it.parent.appendChild(node);
    }
    if (!procs.length) note(s, 'No processes.');
    else if (procs.length > shown)
      note(s, (procs.length - shown) + ' of ' + procs.length + ' processes not shown (the tree stops at ' + MAX_ROWS + ').');
  }

  function drawAgent(d) {
    var s = section('agent'), a = d.agent;
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

  function main() {
    try {
      data = JSON.parse(document.getElementById('run-data').textContent);
    } catch (e) {
      section('summary').appendChild(el('p', 'state-failed', 'The run data of this page cannot be read: ' + e.message));
      return;
    }
    if (!data || typeof data !== 'object') data = {};
    [drawSummary, drawTimeline, drawResources, drawSteps, drawTools, drawSignals, drawTune, drawTree, drawAgent]
      .forEach(function (f) { f(data); });
    document.body.setAttribute('data-ready', '1');
  }
  main();
})();
