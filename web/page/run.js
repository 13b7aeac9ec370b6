/* The run page (/run?id=N): the run's report, drawn by the HTML report's own script
 * (window.tracerReport.render, view/html/report.js) from /api/runs/N/page, and kept live: the server's
 * event stream (/api/runs/N/events) says when the run's row changed; the page then fetches the data again
 * and draws it again where the reader was. A banner lists the steps flagged stalled or slower than usual. */
'use strict';
(function () {
  var W = window.tracerWeb, el = W.el, str = W.str, num = W.num;
  var FINAL = ['succeeded', 'failed', 'lost'];
  var id = W.param('id');
  var stream = null, lastKey = null, drawnState = null, fetching = false, again = false;

  function indicator(cls, text) {
    var e = document.getElementById('live-state');
    e.setAttribute('class', cls);
    e.textContent = text;
  }

  /* Steps flagged by a signal: stalled (tracer run), slower than usual (the analysis, from the lake); the
   * analysis's own sentence (detail) in the tooltip. */
  function drawBanner(d) {
    var box = W.clear(document.getElementById('banner')), names = {}, items = [];
    W.arr(d.steps).forEach(function (s) { if (s && typeof s.id === 'string') names[s.id] = s.name || s.id; });
    W.arr(d.signals).forEach(function (g) {
      if (!g || typeof g !== 'object') return;
      var step = str(g.name || names[g.step] || g.step), text = null;
      if (g.kind === 'stalled') {
        text = step + ': stalled' + (num(g.duration_ns) !== null ? ' for ' + W.fmtSecs(g.duration_ns / 1e9) : '') +
          (g.tool ? ' (' + str(g.tool) + ')' : '') + (g.still_alive ? ', still alive' : '');
      } else if (g.kind === 'slower_than_usual') {
        text = step + ': slower than usual' + (num(g.ratio) !== null ? ', ' + g.ratio.toFixed(2) + 'x' : '') +
          (num(g.median_s) !== null ? ' its median of ' + W.fmtSecs(g.median_s) : '') +
          (g.cause ? ' (cause: ' + str(g.cause) + ')' : '');
      }
      if (text !== null) items.push([text, typeof g.detail === 'string' ? g.detail : null]);
    });
    box.hidden = !items.length;
    if (!items.length) return;
    box.appendChild(el('strong', null, items.length === 1 ? '1 step flagged' : items.length + ' steps flagged'));
    var ul = el('ul');
    items.forEach(function (t) {
      var li = el('li', null, t[0]);
      if (t[1]) li.setAttribute('title', t[1]);
      ul.appendChild(li);
    });
    box.appendChild(ul);
  }

  function render(d) {
    var R = window.tracerReport;
    if (!R || typeof R.render !== 'function') throw new Error('/static/report.js has no tracerReport.render()');
    var x = window.scrollX, y = window.scrollY;
    R.render(d, document.getElementById('report'));
    drawBanner(d);
    window.scrollTo(x, y);
    var rep = W.obj(d.report);  /* tracer.page.v1 (view/html_data.h): the run's own members are in "report" */
    drawnState = typeof rep.state === 'string' ? rep.state : typeof d.state === 'string' ? d.state : null;
    document.getElementById('status-line').textContent = 'drawn ' + new Date().toLocaleTimeString();
    if (!stream) indicator(FINAL.indexOf(drawnState) >= 0 ? 'finished' : '', FINAL.indexOf(drawnState) >= 0 ? 'finished' : str(drawnState));
  }

  /* Fetch and draw; calls that arrive meanwhile make one more round after this one, not one each. */
  function refresh() {
    if (fetching) { again = true; return; }
    fetching = true;
    W.getJSON('/api/runs/' + encodeURIComponent(id) + '/page').then(function (d) {
      render(d && typeof d === 'object' ? d : {});
      W.showError(null);
      if (!stream) listen(); /* after the first drawing: a run that is not there has no stream either */
    }).catch(function (e) {
      W.showError(e);
      if (!stream) setTimeout(refresh, 5000); /* not drawn yet: try again (the stream would say when) */
    }).then(function () {
      fetching = false;
      if (again) { again = false; refresh(); }
    });
  }

  function listen() {
    if (typeof EventSource !== 'function') return;
    stream = new EventSource('/api/runs/' + encodeURIComponent(id) + '/events');
    stream.addEventListener('update', function (ev) {
      var u;
      try { u = JSON.parse(ev.data); } catch (e) { return; }
      if (!u || typeof u !== 'object') return;
      var key = JSON.stringify([u.state, u.update_seq, u.last_update_ns, u.processes, u.steps]);
      var final = u.final === true || FINAL.indexOf(u.state) >= 0;
      indicator(final ? 'finished' : 'live', final ? 'finished' : 'live');
      /* The first event only says what the page already has, unless the run moved since it was fetched. */
      var first = lastKey === null;
      if (key === lastKey) return;
      lastKey = key;
      if (first && final && drawnState === u.state) return;
      refresh();
    });
    stream.addEventListener('end', function () {
      stream.close();
      indicator('finished', 'finished');
    });
    stream.addEventListener('error', function () {
      if (stream.readyState === EventSource.CLOSED) indicator('offline', 'disconnected: reload the page');
      else indicator('offline', 'reconnecting');
    });
  }

  if (!id || !/^[0-9]+$/.test(id)) {
    W.showError(new Error('No run: this page is /run?id=N, N a run number of the runs page.'));
    W.clear(document.getElementById('report'));
    indicator('offline', '-');
    return;
  }
  var links = document.getElementById('run-links');
  links.appendChild(W.link('/api/runs/' + encodeURIComponent(id), 'run #' + id + ' as JSON'));
  refresh();
})();
