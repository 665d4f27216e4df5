// Search over the static index written by `manifester build`
// (/search-index.json): results as you type, the query kept in ?q=, a
// "no match" state. Every text goes in through textContent.
(function () {
  "use strict";
  var input = document.getElementById("q");
  var list = document.getElementById("results");
  var count = document.getElementById("search-count");
  if (!input || !list || !count) return;
  var me = document.currentScript || document.querySelector('script[src$="search.js"]');
  var indexURL = new URL("../search-index.json", me ? me.src : location.href);
  var kinds = { api: "API", error: "error", record: "record type", field: "field", tagged: "tagged field" };
  var order = { api: 0, error: 1, record: 2, field: 3, tagged: 4 };
  var LIMIT = 200;
  var index = null;

  function words(q) {
    return q.toLowerCase().split(/\s+/).filter(function (w) { return w !== ""; });
  }

  // score returns -1 for no match, else a rank (lower is better). A word of
  // digits (with an optional minus) matches an API key or error code whole;
  // other words match inside the name or the path.
  function score(e, ws) {
    var name = e.n.toLowerCase(), info = (e.i || "").toLowerCase(), best = 3;
    for (var i = 0; i < ws.length; i++) {
      var w = ws[i];
      if (/^-?\d+$/.test(w)) {
        if (e.c === w) { best = Math.min(best, 0); continue; }
        if (info.indexOf(w) >= 0 && e.k !== "api" && e.k !== "error") { continue; }
        return -1;
      }
      if (name === w) best = Math.min(best, 0);
      else if (name.indexOf(w) === 0) best = Math.min(best, 1);
      else if (name.indexOf(w) > 0) best = Math.min(best, 2);
      else if (info.indexOf(w) < 0) return -1;
    }
    return best * 10 + order[e.k];
  }

  function show() {
    var q = input.value.trim();
    var url = new URL(location.href);
    if (q) url.searchParams.set("q", q); else url.searchParams.delete("q");
    history.replaceState(null, "", url.pathname + url.search + url.hash);
    while (list.firstChild) list.removeChild(list.firstChild);
    if (!q) { count.textContent = index ? index.length + " entries: type to search" : ""; return; }
    if (!index) { count.textContent = "loading the index…"; return; }
    var ws = words(q), hits = [];
    for (var i = 0; i < index.length; i++) {
      var s = score(index[i], ws);
      if (s >= 0) hits.push({ s: s, e: index[i] });
    }
    hits.sort(function (a, b) { return a.s - b.s || (a.e.n < b.e.n ? -1 : a.e.n > b.e.n ? 1 : 0); });
    if (hits.length === 0) {
      count.textContent = "No match for “" + q + "”.";
      list.hidden = true;
      return;
    }
    list.hidden = false;
    count.textContent = hits.length === 1 ? "1 result" : hits.length > LIMIT ? hits.length + " results (the first " + LIMIT + " shown)" : hits.length + " results";
    hits.slice(0, LIMIT).forEach(function (h) {
      var li = document.createElement("li");
      li.className = "r-" + h.e.k;
      var a = document.createElement("a");
      a.href = h.e.h ? (window.manifesterSiteURL ? window.manifesterSiteURL(h.e.h) : h.e.h) : "#";
      a.textContent = h.e.n;
      var k = document.createElement("span");
      k.className = "kind";
      k.textContent = kinds[h.e.k] || h.e.k;
      li.appendChild(k);
      li.appendChild(document.createTextNode(" "));
      li.appendChild(a);
      if (h.e.i) {
        var i = document.createElement("span");
        i.className = "info";
        i.textContent = " " + h.e.i;
        li.appendChild(i);
      }
      list.appendChild(li);
    });
  }

  var q0 = new URL(location.href).searchParams.get("q");
  if (q0) input.value = q0;
  input.addEventListener("input", show);
  document.querySelector("form.search").addEventListener("submit", function (ev) { ev.preventDefault(); show(); });
  // From file:// a page may not fetch a file, but it may load a script:
  // the same index as static/search-index.js.
  var loaded = location.protocol === "file:" ? new Promise(function (ok, fail) {
    var s = document.createElement("script");
    s.src = new URL("search-index.js", me ? me.src : location.href).href;
    s.onload = function () { window.manifesterSearchIndex ? ok(window.manifesterSearchIndex) : fail(new Error("no index in search-index.js")); };
    s.onerror = function () { fail(new Error("loading search-index.js failed")); };
    document.head.appendChild(s);
  }) : fetch(indexURL).then(function (r) {
    if (!r.ok) throw new Error("HTTP " + r.status);
    return r.json();
  });
  loaded.then(function (data) { index = data; show(); }).catch(function (err) {
    count.textContent = "The search index did not load (" + err.message + ").";
  });
  show();
})();
