/* The hosts page (/hosts): one row per host that sent to the lake: when it was last heard from, how late
 * its records arrive, what it sent and what was lost on the way, its runs; refreshed every 5 s. Under the
 * table, one section per host: its CPU and memory over the last day from its heartbeats
 * (/api/hosts/activity: an SVG chart, a gap where no beat came: unknown, not idle) and where it wasted
 * compute (/api/sweep's findings on it: kind, span, cost, evidence); refreshed every 60 s, as beats come
 * once a minute and a sweep reads the whole window. Host text only as text (web.js). */
'use strict';
(function () {
  var W = window.tracerWeb, el = W.el, svg = W.svg, num = W.num, str = W.str;
  var REFRESH_MS = 5000, ACTIVITY_MS = 60000, SILENT_WARN_S = 60;
  var LOSSES = ['evicted', 'quarantined', 'corrupt', 'ring'];
  var drawn = { table: false, activity: false };

  function ready() { if (drawn.table && drawn.activity) W.setReady(); }

  function lost(h) {
    var l = W.obj(h.losses), n = 0;
    ['gaps', 'missing_records', 'kernel_drops', 'ring_drops'].forEach(function (k) { n += num(h[k]) || 0; });
    LOSSES.forEach(function (k) { n += num(l[k]) || 0; });
    return n;
  }
  /* A count cell, marked when it is not zero (a loss). */
  function lossCell(v) {
    return el('td', 'num' + (num(v) ? ' bad' : ''), W.fmtCount(v));
  }
  function lossesCell(h) {
    var l = W.obj(h.losses), parts = [];
    LOSSES.forEach(function (k) { if (num(l[k])) parts.push(k + ' ' + W.fmtCount(l[k])); });
    return el('td', parts.length ? 'bad' : null, parts.length ? parts.join(', ') : 'none');
  }
  function where(h) {
    return [h.instance_type, h.cloud, h.region].filter(function (v) { return typeof v === 'string' && v; }).join(', ') || '-';
  }
  function hostList(doc) {
    return W.arr(W.obj(doc).hosts).filter(function (h) { return h && typeof h === 'object'; });
  }

  function draw(doc) {
    var hosts = hostList(doc);
    var box = W.clear(document.getElementById('hosts'));
    if (!hosts.length) { box.appendChild(el('p', 'note', 'No host has sent anything to the lake yet.')); return; }
    box.appendChild(W.table([
      { title: 'host', cls: 'host', cell: function (h) {
        var td = el('td', 'host', str(h.host));
        td.setAttribute('title', 'first seen ' + W.fmtTime(h.first_seen_ns));
        return td;
      } },
      { title: 'last seen (UTC)', cls: 'time', cell: function (h) { return W.fmtTime(h.last_seen_ns); } },
      { title: 'silent for', num: true, cell: function (h) {
        return el('td', 'num' + ((num(h.silent_s) || 0) > SILENT_WARN_S ? ' bad' : ''), W.fmtSecs(h.silent_s));
      } },
      { title: 'delivery lag', num: true, cell: function (h) { return W.fmtSecs(h.lag_s); } },
      { title: 'batches', num: true, cell: function (h) { return W.fmtCount(h.batches); } },
      { title: 'records', num: true, cell: function (h) { return W.fmtCount(h.records); } },
      { title: 'gaps', num: true, cell: function (h) { return lossCell(h.gaps); } },
      { title: 'missing records', num: true, cell: function (h) { return lossCell(h.missing_records); } },
      { title: 'kernel drops', num: true, cell: function (h) { return lossCell(h.kernel_drops); } },
      { title: 'ring drops', num: true, cell: function (h) { return lossCell(h.ring_drops); } },
      { title: 'spool losses', cell: lossesCell },
      { title: 'runs running / total', num: true, cell: function (h) {
        return W.fmtCount(h.running_runs) + ' / ' + W.fmtCount(h.runs);
      } },
      { title: 'instance', cls: 'name', cell: where }
    ], hosts, function (h, tr) {
      var warn = lost(h) > 0 || (num(h.silent_s) || 0) > SILENT_WARN_S;
      tr.setAttribute('class', 'host-row' + (warn ? ' host-warn' : ''));
    }));
  }

  /* ---- activity: a host's heartbeats as a chart ---- */

  /* GET a document that may not be there: null for a 404 (no heartbeat of the host, or nothing in the lake
   * yet for the sweep). A refused token is said by the table's own refresh (web.js's getJSON). */
  function getOrNull(url) {
    return fetch(url, { credentials: 'same-origin', cache: 'no-store', headers: { Accept: 'application/json' } })
      .then(function (res) {
        if (res.status === 404) return null;
        if (!res.ok) throw new Error(url + ': HTTP ' + res.status);
        return res.json();
      });
  }

  function maxOf(beats, f) {
    return beats.reduce(function (m, b) { var v = num(f(b)); return v !== null && v > m ? v : m; }, 0);
  }

  /* One path over the beats: a step per beat (its value over its interval), a new subpath after a gap
   * (a missing beat, or one that did not say): nothing is drawn where nothing is known. */
  function stepPath(beats, x, y, value) {
    var d = [], prevEnd = null, n = 0;
    beats.forEach(function (b) {
      var v = value(b), s = num(b.start_ns), e = num(b.end_ns);
      if (v === null || s === null || e === null || e <= s) { prevEnd = null; return; }
      var gap = prevEnd === null || s - prevEnd > (e - s) / 2;
      d.push((gap ? 'M' : 'L') + x(s).toFixed(1) + ' ' + y(v).toFixed(1));
      d.push('L' + x(e).toFixed(1) + ' ' + y(v).toFixed(1));
      prevEnd = e;
      n++;
    });
    return { d: d.join(' '), beats: n };
  }

  function label(x, y, anchor, text, cls) {
    var t = svg('text', { x: x, y: y, 'text-anchor': anchor, 'class': cls || 'chart-label' });
    t.textContent = text;
    return t;
  }

  function coresText(v) { v = +v.toFixed(2); return v === 1 ? '1 core' : v + ' cores'; }
  function beatsText(n) { return n === 1 ? '1 heartbeat' : W.fmtCount(n) + ' heartbeats'; }

  /* What the API clamped to the host (each beat's cores to its online CPUs, its memory used to its total:
   * web/api.c), one line each under the chart; none when nothing was. */
  function clampLines(doc, beats) {
    var lines = [], c = num(doc.cpu_clamped), m = num(doc.mem_clamped);
    var cpus = maxOf(beats, function (b) { return b.cpus; });
    if (c) lines.push(['chart-label activity-clamp activity-cpu-label', 'CPU clamped to the host\'s ' +
      (cpus === 1 ? '1 CPU' : cpus + ' CPUs') + ' in ' + beatsText(c) + ' (a beat\'s busy time said more)']);
    if (m) lines.push(['chart-label activity-clamp activity-mem-label',
      'memory used clamped to the host\'s total in ' + beatsText(m)]);
    return lines;
  }

  /* The chart spans the window, from its first beat when that came later (a host heard from for minutes
   * is not a sliver at the end of a day). */
  function drawChart(box, doc) {
    var beats = W.arr(doc.beats).map(W.obj);
    var since = num(doc.since_ns), now = num(doc.now_ns), first = beats.length ? num(beats[0].start_ns) : null;
    if (first !== null && since !== null && first > since) since = first;
    if (since === null || now === null || now <= since) return;
    var cores = Math.max(1, maxOf(beats, function (b) { return b.cpus; }),
                         maxOf(beats, function (b) { return b.cpu_cores; }));
    var clamped = clampLines(doc, beats);
    var Wd = 1200, H = 170 + 16 * clamped.length, L = 64, R = 80, T = 12, B = 24 + 16 * clamped.length;
    var mem = maxOf(beats, function (b) { return b.mem_total_bytes; }) ||
              maxOf(beats, function (b) { return b.mem_used_bytes; }) || 1;
    function x(ns) { return L + (Wd - L - R) * Math.min(1, Math.max(0, (ns - since) / (now - since))); }
    function yOf(max) { return function (v) { return T + (H - T - B) * (1 - Math.min(1, v / max)); }; }
    var root = svg('svg', { width: Wd, height: H, viewBox: '0 0 ' + Wd + ' ' + H, 'class': 'chart activity-chart' });
    var axis = svg('g', { 'class': 'axis' });
    [0, 0.5, 1].forEach(function (f) {
      var y = yOf(1)(f);
      axis.appendChild(svg('line', { x1: L, x2: Wd - R, y1: y, y2: y }));
      axis.appendChild(label(L - 6, y + 4, 'end', coresText(cores * f), 'chart-label activity-cpu-label'));
      axis.appendChild(label(Wd - R + 6, y + 4, 'start', W.fmtBytes(mem * f), 'chart-label activity-mem-label'));
    });
    root.appendChild(axis);
    root.appendChild(label(L, H - 6, 'start', W.fmtTime(since) + ' UTC'));
    root.appendChild(label(Wd - R, H - 6, 'end', W.fmtTime(now) + ' UTC'));
    var cpu = stepPath(beats, x, yOf(cores), function (b) { return num(b.cpu_cores); });
    var used = stepPath(beats, x, yOf(mem), function (b) { return num(b.mem_used_bytes); });
    var memPath = svg('path', { d: used.d, 'class': 'activity-mem', 'data-beats': used.beats });
    var memTip = svg('title', {});
    memTip.textContent = 'memory used (of ' + W.fmtBytes(mem) + ')';
    memPath.appendChild(memTip);
    root.appendChild(memPath);
    var cpuPath = svg('path', { d: cpu.d, 'class': 'activity-cpu', 'data-beats': cpu.beats });
    var cpuTip = svg('title', {});
    cpuTip.textContent = 'CPU used (of ' + coresText(cores) + ')';
    cpuPath.appendChild(cpuTip);
    root.appendChild(cpuPath);
    clamped.forEach(function (c, i) {
      root.appendChild(label(L, H - 6 - 16 * (clamped.length - i), 'start', c[1], c[0]));
    });
    box.appendChild(root);
  }

  /* ---- findings: where the host wasted compute (tracer sweep) ---- */

  function fmtCost(c) {
    var usd = num(W.obj(c).usd);
    if (usd === null) return 'unpriced';
    return '$' + usd.toFixed(usd > 0 && usd < 0.01 ? 4 : 2);
  }

  function drawFindings(box, findings) {
    if (!findings.length) {
      box.appendChild(el('p', 'note', 'No waste found on this host in the sweep\'s window.'));
      return;
    }
    box.appendChild(W.table([
      { title: 'kind', cls: 'kind', cell: function (f) { return str(f.kind); } },
      { title: 'from (UTC)', cls: 'time', cell: function (f) { return W.fmtTime(f.start_ns); } },
      { title: 'span', num: true, cell: function (f) { return W.fmtSecs(f.duration_s); } },
      { title: 'cost', num: true, cell: function (f) { return fmtCost(f.cost); } },
      { title: 'run', num: true, cell: function (f) {
        return num(f.run_id) !== null ? W.link(W.runHref(f.run_id), '#' + f.run_id) : '-';
      } },
      { title: 'evidence', cls: 'name', cell: function (f) { return str(W.obj(f.evidence).text); } }
    ], findings, function (f, tr) { tr.setAttribute('class', 'finding-row'); }));
  }

  function windowText(doc) {
    var since = num(doc.since_ns), now = num(doc.now_ns);
    return since !== null && now !== null ? W.fmtSecs((now - since) / 1e9) : '-';
  }

  /* One section: the host's chart (or why there is none) and its findings. */
  function hostSection(host, act, sweep) {
    var sec = el('section', 'host-activity');
    sec.setAttribute('data-host', host);
    sec.appendChild(el('h2', 'host', host));
    var chart = el('div', 'activity');
    if (act && act.error) chart.appendChild(el('p', 'error', act.error.message || String(act.error)));
    else if (act === null)
      chart.appendChild(el('p', 'note', 'No heartbeat from this host in the lake: its activity is unknown.'));
    else {
      var beats = W.arr(act.beats);
      chart.appendChild(el('p', 'note', beats.length
        ? beats.length + (act.bucketed ? ' buckets of heartbeats' : ' heartbeats') + ' over the last ' +
          windowText(act) + ' before the lake\'s newest word: CPU cores used (blue), memory used (orange); a gap ' +
          'is a time no beat came from the host: unknown, not idle.'
        : 'No heartbeat from this host in the last ' + windowText(act) + ': unknown, not idle.'));
      if (beats.length) drawChart(chart, act);
    }
    sec.appendChild(chart);
    var fbox = el('div', 'findings');
    if (sweep.error) fbox.appendChild(el('p', 'error', sweep.error.message || String(sweep.error)));
    else drawFindings(fbox, W.arr(sweep.findings).map(W.obj).filter(function (f) { return f.host === host; }));
    sec.appendChild(fbox);
    return sec;
  }

  function drawActivity(hosts, acts, sweep) {
    var box = W.clear(document.getElementById('activity'));
    var line = document.getElementById('sweep-line');
    if (sweep === null) { sweep = {}; line.textContent = 'Nothing in the lake to sweep yet.'; }
    else if (sweep.error)
      line.textContent = 'The sweep could not be read: ' + (sweep.error.message || String(sweep.error));
    else {
      var all = W.arr(sweep.findings).map(W.obj);
      var priced = all.filter(function (f) { return num(W.obj(f.cost).usd) !== null; }).length;
      line.textContent = 'Sweep over the last ' + windowText(sweep) + ' before the lake\'s newest word (since ' +
        W.fmtTime(sweep.since_ns) + ' UTC): ' + all.length + ' finding' + (all.length === 1 ? '' : 's') +
        (priced ? ', ' + fmtCost({ usd: num(sweep.total_cost_usd) }) + ' for the ' + priced + ' priced'
                : all.length ? ', none priced' : '') +
        '; updated ' + new Date().toLocaleTimeString() + ', every ' + ACTIVITY_MS / 1000 + ' s.';
    }
    if (!hosts.length) { box.appendChild(el('p', 'note', 'No host yet.')); return; }
    hosts.forEach(function (h, i) { box.appendChild(hostSection(h, acts[i], sweep)); });
    /* A run's findings whose host sent no heartbeat in the window (so is not among the sweep's hosts). */
    var other = sweep.error ? [] : W.arr(sweep.findings).map(W.obj)
      .filter(function (f) { return typeof f.host !== 'string'; });
    if (other.length) {
      var sec = el('section', 'host-activity');
      sec.setAttribute('data-host', '');
      sec.appendChild(el('h2', null, 'Findings on hosts that sent no heartbeat in the window'));
      drawFindings(sec, other);
      box.appendChild(sec);
    }
  }

  function loadActivity() {
    return W.getJSON('/api/hosts').then(function (doc) {
      var hosts = hostList(doc).map(function (h) { return h.host; })
        .filter(function (h) { return typeof h === 'string' && h; });
      function failed(e) { return { error: e }; }
      return Promise.all([
        getOrNull('/api/sweep').then(function (d) { return d === null ? null : W.obj(d); }, failed),
        Promise.all(hosts.map(function (h) {
          return getOrNull('/api/hosts/activity?host=' + encodeURIComponent(h)).then(function (a) {
            return a === null ? null : W.obj(a);
          }, failed);
        }))
      ]).then(function (res) {
        drawActivity(hosts, res[1], res[0]);
        drawn.activity = true;
        ready();
      });
    });
  }

  W.every(REFRESH_MS, function () {
    return W.getJSON('/api/hosts').then(function (doc) {
      draw(W.obj(doc));
      W.showError(null);
      document.getElementById('status-line').textContent = 'updated ' + new Date().toLocaleTimeString() +
        ', every ' + REFRESH_MS / 1000 + ' s';
      drawn.table = true;
      ready();
    });
  });
  W.every(ACTIVITY_MS, loadActivity);
})();
