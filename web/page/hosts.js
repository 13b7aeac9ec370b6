/* The hosts page (/hosts): one row per host that sent to the lake: when it was last heard from, how late
 * its records arrive, what it sent and what was lost on the way, its runs. Refreshed every 5 s. */
'use strict';
(function () {
  var W = window.tracerWeb, el = W.el, num = W.num, str = W.str;
  var REFRESH_MS = 5000, SILENT_WARN_S = 60;
  var LOSSES = ['evicted', 'quarantined', 'corrupt', 'ring'];

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

  function draw(doc) {
    var hosts = W.arr(doc.hosts).filter(function (h) { return h && typeof h === 'object'; });
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

  W.every(REFRESH_MS, function () {
    return W.getJSON('/api/hosts').then(function (doc) {
      draw(W.obj(doc));
      W.showError(null);
      document.getElementById('status-line').textContent = 'updated ' + new Date().toLocaleTimeString() +
        ', every ' + REFRESH_MS / 1000 + ' s';
      W.setReady();
    });
  });
})();
