/* The pipeline page (/pipeline?name=P): the duration of each run as an SVG bar chart (a bar per run, class
 * run-point, linking to the run), the runs with the steps that were slower than usual, and the pipeline's
 * recommendations (tracer tune). Without a name: the list of pipelines. Host text only as text (web.js). */
'use strict';
(function () {
  var W = window.tracerWeb, el = W.el, svg = W.svg, num = W.num, str = W.str;
  var name = W.param('name');

  function stClass(s) {
    var n = W.stateName(s);
    return n === 'failed' ? 'st-failed' : n === 'running' ? 'st-running' : n === 'succeeded' ? 'st-ok' : 'st-lost';
  }
  function secs(r) {
    if (num(r.duration_s) !== null) return r.duration_s;
    return W.runSecs(r);
  }
  /* Axis step: 1, 2 or 5 times a power of ten, about 5 lines up the chart. */
  function tickStep(max) {
    var raw = max / 5, p = Math.pow(10, Math.floor(Math.log10(raw)));
    var m = raw / p;
    return (m < 2 ? 1 : m < 5 ? 2 : 5) * p;
  }

  function drawChart(runs) {
    var box = W.clear(document.getElementById('chart'));
    if (!runs.length) { box.appendChild(el('p', 'note', 'No runs.')); return; }
    var Wd = 1200, H = 240, L = 64, R = 10, T = 12, B = 30, n = runs.length;
    var max = Math.max.apply(null, runs.map(function (r) { return secs(r) || 0; }).concat([0.001]));
    var stepV = tickStep(max), top = Math.ceil(max / stepV) * stepV;
    var root = svg('svg', { width: Wd, height: H, viewBox: '0 0 ' + Wd + ' ' + H, 'class': 'chart', id: 'duration-chart' });
    var axis = svg('g', { 'class': 'axis' });
    for (var v = 0; v <= top + stepV / 2; v += stepV) {
      var y = T + (H - T - B) * (1 - v / top);
      axis.appendChild(svg('line', { x1: L, x2: Wd - R, y1: y, y2: y }));
      var lab = svg('text', { x: L - 6, y: y + 4, 'text-anchor': 'end' });
      lab.textContent = v < 60 ? String(+v.toFixed(3)) + ' s' : W.fmtSecs(v);
      axis.appendChild(lab);
    }
    root.appendChild(axis);
    var slot = (Wd - L - R) / n, bw = Math.max(1, Math.min(40, slot * 0.7));
    var every = Math.ceil(n / 30); /* at most ~30 labels under the bars */
    runs.forEach(function (r, i) {
      var s = secs(r), x = L + i * slot + (slot - bw) / 2;
      var h = s === null ? 0 : Math.max(1, (H - T - B) * s / top);
      var slower = W.arr(r.slower).length > 0;
      var bar = svg('rect', { x: x.toFixed(1), y: (H - B - h).toFixed(1), width: bw.toFixed(1), height: h.toFixed(1),
                              'class': 'run-point ' + stClass(r.state) + (slower ? ' slower' : '') });
      if (num(r.run_id) !== null) bar.setAttribute('data-run', String(r.run_id));
      var tip = svg('title', {});
      tip.textContent = 'run #' + str(r.run_id) + ': ' + W.fmtSecs(s) + ', ' + str(r.state) + ', ' + W.fmtTime(r.start_ns) + ' UTC' +
        (slower ? ', slower than usual: ' + slowerText(r) : '');
      bar.appendChild(tip);
      if (num(r.run_id) !== null) {
        var a = svg('a', {});
        a.setAttribute('href', W.runHref(r.run_id));
        a.appendChild(bar);
        root.appendChild(a);
      } else root.appendChild(bar);
      if (i % every === 0) {
        var t = svg('text', { x: (x + bw / 2).toFixed(1), y: H - B + 14, 'text-anchor': 'middle', 'class': 'chart-label' });
        t.textContent = '#' + str(r.run_id);
        root.appendChild(t);
      }
    });
    box.appendChild(root);
    box.appendChild(el('p', 'note', 'Each bar is a run, oldest first: green succeeded, red failed, blue still running ' +
      '(so far), grey lost, orange a run with steps slower than usual. Click a bar for the run.'));
  }

  function slowerText(r) {
    return W.arr(r.slower).map(function (s) {
      s = W.obj(s);
      return str(s.step) + (num(s.ratio) !== null ? ' ' + s.ratio.toFixed(2) + 'x' : '') +
        (s.cause ? ' (' + str(s.cause) + ')' : '');
    }).join('; ');
  }

  /* Each slower step: its name, how much slower than its median, the probable cause; the analysis's own
   * sentence (detail) in the tooltip. */
  function slowerCell(r) {
    var list = W.arr(r.slower), td = el('td', 'slow');
    if (!list.length) { td.textContent = '-'; return td; }
    list.forEach(function (s, i) {
      s = W.obj(s);
      var line = el('div', 'slow-step');
      line.appendChild(el('strong', null, str(s.step)));
      line.appendChild(document.createTextNode(
        (num(s.ratio) !== null ? ' ' + s.ratio.toFixed(2) + 'x' : '') +
        (num(s.median_s) !== null ? ' its median of ' + W.fmtSecs(s.median_s) : '') +
        (s.cause ? ', cause: ' + str(s.cause) : '')));
      if (typeof s.detail === 'string' && s.detail) line.setAttribute('title', s.detail);
      td.appendChild(line);
    });
    return td;
  }

  function drawRuns(runs) {
    var box = W.clear(document.getElementById('runs'));
    if (!runs.length) return;
    var newest = runs.slice().reverse();
    box.appendChild(W.table([
      { title: 'run', num: true, cell: function (r) { return num(r.run_id) !== null ? W.link(W.runHref(r.run_id), '#' + r.run_id) : '-'; } },
      { title: 'state', cell: function (r) { return W.stateCell(r.state); } },
      { title: 'started (UTC)', cls: 'time', cell: function (r) { return W.fmtTime(r.start_ns); } },
      { title: 'duration', num: true, cell: function (r) { return W.fmtSecs(secs(r)); } },
      { title: 'host', cls: 'host', cell: function (r) { return str(r.host); } },
      { title: 'slower than usual (step, ratio, cause)', cell: slowerCell }
    ], newest, function (r, tr) {
      tr.setAttribute('class', 'pipeline-run' + (W.arr(r.slower).length ? ' slower' : ''));
      if (num(r.run_id) !== null) tr.setAttribute('data-run', String(r.run_id));
    }));
  }

  function drawRecs(recs) {
    var box = W.clear(document.getElementById('recs'));
    if (!recs.length) {
      box.appendChild(el('p', 'note', 'No recommendations yet: they need finished runs of this pipeline.'));
      return;
    }
    box.appendChild(W.table([
      { title: 'step', cls: 'name', cell: function (x) { return str(x.step); } },
      { title: 'runs', num: true, cell: function (x) { return str(x.runs); } },
      { title: 'class', cell: function (x) { return str(x['class']); } },
      { title: 'confidence', cell: function (x) { return str(x.confidence); } },
      { title: 'CPUs', num: true, cell: function (x) { return str(x.cpus); } },
      { title: 'memory', num: true, cell: function (x) { return W.fmtBytes(x.memory_bytes); } },
      { title: 'time', num: true, cell: function (x) { return W.fmtSecs(x.time_s); } }
    ], recs, function (x, tr) { tr.setAttribute('class', 'rec-row'); }));
  }

  function loadOne() {
    return W.getJSON('/api/pipeline?name=' + encodeURIComponent(name)).then(function (doc) {
      var runs = W.arr(doc.runs).filter(function (r) { return r && typeof r === 'object'; });
      var recs = W.arr(doc.recommendations).filter(function (r) { return r && typeof r === 'object'; });
      document.getElementById('title').textContent = 'Pipeline ' + name;
      var nslow = runs.filter(function (r) { return W.arr(r.slower).length; }).length;
      document.getElementById('subtitle').textContent = runs.length + ' runs' +
        (nslow ? ', ' + nslow + ' with steps slower than usual' : '');
      drawChart(runs);
      drawRuns(runs);
      drawRecs(recs);
      W.showError(null);
      W.setReady();
    });
  }

  /* No name: the pipelines of the lake, each linking to its page. */
  function loadAll() {
    return W.getJSON('/api/pipelines').then(function (doc) {
      var list = W.arr(doc.pipelines).filter(function (p) { return p && typeof p === 'object'; });
      document.getElementById('title').textContent = 'Pipelines';
      ['chart-section', 'recs-section'].forEach(function (s) { document.getElementById(s).hidden = true; });
      document.querySelector('#runs-section h2').textContent = 'Pipelines';
      var box = W.clear(document.getElementById('runs'));
      if (!list.length) box.appendChild(el('p', 'note', 'No pipelines in the lake yet.'));
      else box.appendChild(W.table([
        { title: 'pipeline', cls: 'name', cell: function (p) {
          return typeof p.pipeline === 'string' ? W.link(W.pipelineHref(p.pipeline), p.pipeline) : '-';
        } },
        { title: 'runs', num: true, cell: function (p) { return W.fmtCount(p.runs); } },
        { title: 'last run', num: true, cell: function (p) {
          return num(p.last_run_id) !== null ? W.link(W.runHref(p.last_run_id), '#' + p.last_run_id) : '-';
        } },
        { title: 'last started (UTC)', cls: 'time', cell: function (p) { return W.fmtTime(p.last_start_ns); } },
        { title: 'last state', cell: function (p) { return W.stateCell(p.last_state); } }
      ], list, function (p, tr) { tr.setAttribute('class', 'pipeline-row'); }));
      W.showError(null);
      W.setReady();
    });
  }

  W.every(5000, name ? loadOne : loadAll);
})();
