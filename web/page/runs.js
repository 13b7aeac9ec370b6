/* The runs page (/): every run of the lake, live and finished, newest first, filtered by pipeline, host and
 * state (the selects come from the API's "filters"), refreshed every 5 s. Host text only as text (web.js). */
'use strict';
(function () {
  var W = window.tracerWeb, el = W.el, num = W.num, str = W.str;
  var REFRESH_MS = 5000, LIMIT = 500;
  var FILTERS = [['pipeline', 'pipelines'], ['host', 'hosts'], ['state', 'states']];

  function select(name) { return document.getElementById('f-' + name); }

  /* The filters live in the page's URL, so a filtered view can be bookmarked and survives a reload. */
  function fromUrl() {
    FILTERS.forEach(function (f) {
      var v = W.param(f[0]);
      if (v) setOptions(select(f[0]), [v], v);
    });
  }
  function query() {
    var q = new URLSearchParams();
    FILTERS.forEach(function (f) { if (select(f[0]).value) q.set(f[0], select(f[0]).value); });
    return q;
  }

  /* Options: "all", then the API's values; the chosen one stays even when the API no longer lists it. */
  function setOptions(sel, values, chosen) {
    var list = W.arr(values).filter(function (v) { return typeof v === 'string' && v !== ''; });
    if (chosen && list.indexOf(chosen) < 0) list.unshift(chosen);
    var old = Array.prototype.map.call(sel.options, function (o) { return o.value; }).slice(1);
    if (old.length === list.length && old.every(function (v, i) { return v === list[i]; })) return;
    W.clear(sel);
    var all = el('option', null, 'all');
    all.value = '';
    sel.appendChild(all);
    list.forEach(function (v) {
      var o = el('option', null, v);
      o.value = v;
      sel.appendChild(o);
    });
    sel.value = chosen || '';
  }

  /* A host id is 32 hex digits: its first 12 say which (as tracer report does), the whole in the tooltip. */
  function hostCell(r) {
    var td = el('td', 'host', typeof r.host === 'string' && r.host.length > 12 ? r.host.slice(0, 12) : str(r.host));
    if (typeof r.host === 'string') td.setAttribute('title', r.host);
    return td;
  }

  function runRow(r, tr) {
    tr.setAttribute('class', 'run-row');
    if (num(r.run_id) !== null) tr.setAttribute('data-run', String(r.run_id));
  }

  function draw(doc) {
    var runs = W.arr(doc.runs).filter(function (r) { return r && typeof r === 'object'; });
    var f = W.obj(doc.filters);
    FILTERS.forEach(function (x) { setOptions(select(x[0]), f[x[1]], select(x[0]).value); });
    var box = W.clear(document.getElementById('runs'));
    if (!runs.length) {
      box.appendChild(el('p', 'note', 'No runs' + (query().toString() ? ' match these filters.' : ' in the lake yet.')));
      return;
    }
    var cols = [
      { title: 'run', num: true, cell: function (r) { return num(r.run_id) !== null ? W.link(W.runHref(r.run_id), '#' + r.run_id) : '-'; } },
      { title: 'state', cell: function (r) { return W.stateCell(r.state); } },
      { title: 'pipeline', cls: 'name', cell: function (r) {
        return typeof r.pipeline === 'string' && r.pipeline ? W.link(W.pipelineHref(r.pipeline), r.pipeline) : '-';
      } },
      { title: 'host', cls: 'host', cell: hostCell },
      { title: 'started (UTC)', cls: 'time', cell: function (r) { return W.fmtTime(r.start_ns); } },
      { title: 'duration', num: true, cell: function (r) { return W.fmtSecs(W.runSecs(r)); } },
      { title: 'steps', num: true, cell: function (r) { return W.fmtCount(r.steps); } },
      { title: 'processes', num: true, cell: function (r) { return W.fmtCount(r.processes); } },
      { title: 'exit', num: true, cell: function (r) { return str(r.exit_code); } },
      { title: 'engine', cell: function (r) { return str(r.engine); } },
      { title: 'command', cls: 'cmd', cell: function (r) { return W.commandText(r.command); } }
    ];
    /* The pipeline's own name or id for the run (Nextflow's -name, TRACER_RUN_ID, SLURM's job), when any run has one. */
    if (runs.some(function (r) { return r.run_name || r.pipeline_run_id; }))
      cols.splice(cols.length - 1, 0, { title: 'run name / id', cls: 'name', cell: function (r) { return str(r.run_name || r.pipeline_run_id); } });
    box.appendChild(W.table(cols, runs, runRow));
    var matching = num(doc.matching) !== null ? doc.matching : runs.length;
    if (matching > runs.length)
      box.appendChild(el('p', 'note', 'The newest ' + runs.length + ' of ' + W.fmtCount(matching) + ' runs are shown; filter to see others.'));
  }

  function load() {
    var q = query();
    q.set('limit', String(LIMIT));
    return W.getJSON('/api/runs?' + q.toString()).then(function (doc) {
      draw(doc);
      W.showError(null);
      document.getElementById('status-line').textContent = 'updated ' + new Date().toLocaleTimeString() +
        ', every ' + REFRESH_MS / 1000 + ' s';
      W.setReady();
    });
  }

  fromUrl();
  FILTERS.forEach(function (f) {
    select(f[0]).addEventListener('change', function () {
      var q = query().toString();
      history.replaceState(null, '', q ? '/?' + q : '/');
      load().catch(W.showError);
    });
  });
  W.every(REFRESH_MS, load);
})();
