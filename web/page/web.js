/* tracer-web's shared page code (docs/web.md): element builders, formats, links and the JSON fetch.
 *
 * Every string of the API came from a monitored host and may be anything (markup, quotes, newlines,
 * U+FFFD for bytes that were not UTF-8). It reaches the page only as text: textContent, or setAttribute
 * of a fixed attribute name (a class from a fixed list, a number, a link built here with
 * encodeURIComponent). Nothing here parses HTML or runs code from a string, and the server's
 * Content-Security-Policy (script-src 'self', no inline script or style) would refuse it anyway. */
'use strict';
(function () {
  var SVG_NS = 'http://www.w3.org/2000/svg'; /* an XML namespace name, never fetched */
  var STATES = ['running', 'succeeded', 'failed', 'lost'];

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
  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  }
  /* A link to one of our own pages: href is always built by runHref / pipelineHref / a fixed path. */
  function link(href, text, cls) {
    var a = el('a', cls, text);
    a.setAttribute('href', href);
    return a;
  }
  function num(v) { return typeof v === 'number' && isFinite(v) ? v : null; }
  function str(v) {
    if (v === null || v === undefined || v === '') return '-';
    if (typeof v === 'object') return JSON.stringify(v);
    return String(v);
  }
  function arr(v) { return Array.isArray(v) ? v : []; }
  function obj(v) { return v && typeof v === 'object' && !Array.isArray(v) ? v : {}; }

  /* A state as a class name from a fixed list: a host's string never becomes a class of its own. */
  function stateName(s) { return STATES.indexOf(s) >= 0 ? s : 'other'; }
  function stateCell(s) { return el('td', 'state state-' + stateName(s), str(s)); }

  function runHref(id) { return '/run?id=' + encodeURIComponent(String(id)); }
  function pipelineHref(name) { return '/pipeline?name=' + encodeURIComponent(String(name)); }

  /* Times: nanoseconds since 1970 (beyond a double's exact integers by a few hundred ns: fine to show), shown
   * in UTC, as tracer report does; the column headings say so. */
  function fmtTime(ns) {
    if (num(ns) === null) return '-';
    return new Date(ns / 1e6).toISOString().replace('T', ' ').replace(/\.\d+Z$/, '');
  }
  function fmtSecs(s) {
    if (num(s) === null) return '-';
    var a = Math.abs(s);
    if (a < 10) return s.toFixed(2) + ' s';
    if (a < 60) return s.toFixed(1) + ' s';
    if (a < 3600) return Math.floor(s / 60) + 'm ' + Math.floor(s % 60) + 's';
    if (a < 86400) return Math.floor(s / 3600) + 'h ' + Math.floor((s % 3600) / 60) + 'm';
    return Math.floor(s / 86400) + 'd ' + Math.floor((s % 86400) / 3600) + 'h';
  }
  function fmtBytes(b) {
    if (num(b) === null) return '-';
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    while (Math.abs(b) >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return (i ? b.toFixed(1) : b.toFixed(0)) + ' ' + u[i];
  }
  function fmtCount(n) {
    if (num(n) === null) return '-';
    return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  }
  function nowNs() { return Date.now() * 1e6; }
  /* A run's duration: end - start, or so far for one still running. */
  function runSecs(r) {
    var a = num(r.start_ns), b = num(r.end_ns);
    if (a === null) return null;
    if (b === null) return r.state === 'running' ? Math.max(0, nowNs() - a) / 1e9 : null;
    return (b - a) / 1e9;
  }
  function commandText(c) { return Array.isArray(c) ? c.map(str).join(' ') : str(c); }

  /* GET a JSON document of the API; the auth cookie goes along (same origin). */
  function getJSON(url) {
    return fetch(url, { credentials: 'same-origin', cache: 'no-store', headers: { Accept: 'application/json' } })
      .then(function (res) {
        if (res.status === 401 || res.status === 403)
          throw new Error(url + ': HTTP ' + res.status + ': not signed in; open this page once as ' +
                          location.pathname + '?token=TOKEN (the token of tracer-web --token-file)');
        if (!res.ok) throw new Error(url + ': HTTP ' + res.status);
        return res.json();
      });
  }

  /* One message box per page (#error), cleared by the next success. */
  function showError(e) {
    var box = document.getElementById('error');
    if (!box) return;
    box.textContent = e ? (e.message || String(e)) : '';
    box.hidden = !e;
  }
  /* The tests wait for this (tests/e2e/check_web.py), as for the report's own. */
  function setReady() { document.body.setAttribute('data-ready', '1'); }
  function param(name) { return new URLSearchParams(location.search).get(name); }

  /* A table: cols [{title, num, cls, cell (row -> text | Node)}], one tr per row (rowAttrs (row, tr)). */
  function table(cols, rows, rowAttrs) {
    var t = el('table', 'list'), thead = el('thead'), tbody = el('tbody'), htr = el('tr');
    cols.forEach(function (c) { htr.appendChild(el('th', c.num ? 'num' : null, c.title)); });
    thead.appendChild(htr);
    t.appendChild(thead);
    rows.forEach(function (r) {
      var tr = el('tr');
      if (rowAttrs) rowAttrs(r, tr);
      cols.forEach(function (c) {
        var v = c.cell(r);
        if (v instanceof Node && v.nodeName === 'TD') { tr.appendChild(v); return; }
        var td = el('td', c.num ? 'num' : (c.cls || null));
        if (v instanceof Node) td.appendChild(v);
        else td.textContent = v === null || v === undefined ? '-' : String(v);
        tr.appendChild(td);
      });
      tbody.appendChild(tr);
    });
    t.appendChild(tbody);
    return t;
  }

  /* Call f now and then every ms milliseconds after each call settles (never two at once). */
  function every(ms, f) {
    function tick() {
      Promise.resolve().then(f).catch(showError).then(function () { setTimeout(tick, ms); });
    }
    tick();
  }

  window.tracerWeb = {
    el: el, svg: svg, clear: clear, link: link, num: num, str: str, arr: arr, obj: obj,
    stateName: stateName, stateCell: stateCell, runHref: runHref, pipelineHref: pipelineHref,
    fmtTime: fmtTime, fmtSecs: fmtSecs, fmtBytes: fmtBytes, fmtCount: fmtCount, nowNs: nowNs,
    runSecs: runSecs, commandText: commandText, getJSON: getJSON, showError: showError,
    setReady: setReady, param: param, table: table, every: every
  };
})();
