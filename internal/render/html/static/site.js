// manifester site script. Pages are complete without it; it only adds
// interaction: the index filter, byte <-> field highlighting with pinning
// and URL-fragment selection, keyboard moves in the byte grid, and copying
// hex. Served as a file (no inline script), so CSP default-src 'self' holds.
(function () {
  "use strict";

  function $(sel, root) { return (root || document).querySelector(sel); }
  function $$(sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); }

  // ---- site URLs ---------------------------------------------------------
  // Pages link relative to themselves, so the site works under any base
  // path and from file://. The site's root is where this script's folder
  // (static/) sits; siteURL turns a site path ("/api/decode", as the
  // decode answers and the search index carry them) into a URL under it.
  var me = document.currentScript || $('script[src$="site.js"]');
  var root = new URL("../", me ? me.src : location.href);
  function siteURL(p) {
    var u = new URL(String(p).replace(/^\//, ""), root);
    if (u.protocol === "file:" && /\/$/.test(u.pathname)) u.pathname += "index.html";
    return u.href;
  }
  // relink gives the site-path links of inserted markup their URLs and,
  // from file://, makes every link to a folder name its index.html (a
  // file:// folder is a listing, not the page).
  function relink(el) {
    $$("a[href]", el).forEach(function (a) {
      var h = a.getAttribute("href");
      if (h.charAt(0) === "/" && h.charAt(1) !== "/") a.href = siteURL(h);
      else if (location.protocol === "file:" && a.protocol === "file:" && /\/$/.test(a.pathname)) a.pathname += "index.html";
    });
  }
  window.manifesterSiteURL = siteURL;

  // ---- index filter ----------------------------------------------------
  function initFilter() {
    var box = $("#filter-box"), input = $("#filter"), table = $("#apis");
    if (!box || !input || !table) return;
    box.hidden = false;
    var rows = $$("tbody tr", table), out = $("#filter-count");
    function apply() {
      var q = input.value.trim().toLowerCase(), n = 0;
      rows.forEach(function (tr) {
        var show = q === "" || tr.dataset.key === q || tr.dataset.s.indexOf(q) >= 0;
        tr.hidden = !show;
        if (show) n++;
      });
      if (out) out.textContent = q === "" ? rows.length + " API keys" : n + " of " + rows.length + " API keys";
    }
    input.addEventListener("input", apply);
    input.addEventListener("keydown", function (e) {
      if (e.key === "Escape") { input.value = ""; apply(); }
    });
    var q = new URLSearchParams(location.search).get("q");
    if (q) { input.value = q; }
    apply();
  }

  // ---- byte <-> field --------------------------------------------------
  var sections = [];

  function Section(el) {
    this.el = el;
    this.kind = el.dataset.kind;
    this.hex = el.dataset.hex || "";
    this.cells = $$("td.b", el);
    this.rows = $$("table.tree tbody tr", el);
    this.out = $("output.sel", el);
    this.fieldBtn = $("button[data-copy=field]", el);
    this.pane = $(".bytes-pane", el);
    this.marked = [];
    this.pinned = null;
    this.current = null;
    var tools = $(".tools", el);
    if (tools) tools.hidden = false;
  }

  Section.prototype.clear = function () {
    this.marked.forEach(function (x) { x.classList.remove("sel", "grp", "anc"); });
    this.marked = [];
    this.current = null;
    if (this.fieldBtn) this.fieldBtn.disabled = true;
    if (this.out) this.out.textContent = "Point at a byte or a tree row; click to pin.";
  };

  Section.prototype.mark = function (el, cls) {
    el.classList.add(cls);
    this.marked.push(el);
  };

  Section.prototype.markBytes = function (row, cls) {
    var o = +row.dataset.o, n = +row.dataset.n;
    for (var i = o; i < o + n && i < this.cells.length; i++) this.mark(this.cells[i], cls);
  };

  // show selects a tree row: the row and its bytes get "sel", its parent
  // row and the parent's bytes "grp", further ancestors "anc".
  Section.prototype.show = function (row) {
    this.clear();
    if (!row) return;
    this.current = row;
    this.mark(row, "sel");
    this.markBytes(row, "sel");
    var p = +row.dataset.p;
    if (p >= 0) {
      var parent = this.rows[p];
      this.mark(parent, "grp");
      this.markBytes(parent, "grp");
      for (var q = +parent.dataset.p; q >= 0; q = +this.rows[q].dataset.p) this.mark(this.rows[q], "anc");
    }
    if (this.fieldBtn) this.fieldBtn.disabled = false;
    if (this.out) {
      var c = row.children;
      this.out.textContent = row.id.slice(this.kind.length + 1) + "  " + c[1].textContent + " " +
        c[2].textContent + "  " + c[3].textContent + (this.pinned === row ? "  (pinned)" : "");
    }
  };

  // revealBytes scrolls the sticky byte pane (not the page) so that the
  // first byte of the selected row is visible in it.
  Section.prototype.revealBytes = function (row) {
    var pane = this.pane, cell = this.cells[+row.dataset.o];
    if (!pane || !cell || pane.scrollHeight <= pane.clientHeight) return;
    var pr = pane.getBoundingClientRect(), cr = cell.getBoundingClientRect();
    var tools = $(".tools", pane), top = tools ? tools.getBoundingClientRect().bottom : pr.top;
    if (cr.top < top || cr.bottom > pr.bottom) pane.scrollTop += cr.top - top - (pr.bottom - top - cr.height) / 2;
  };

  // paneStuck reports whether the byte pane sits at the top of the window,
  // where scrolling the page does not move it.
  Section.prototype.paneStuck = function () {
    return this.pane && Math.abs(this.pane.getBoundingClientRect().top) < 2;
  };

  // revealRow scrolls the page so that a tree row is visible below the
  // byte pane.
  Section.prototype.revealRow = function (row) {
    var top = this.pane ? Math.max(this.pane.getBoundingClientRect().bottom, 0) : 0;
    var r = row.getBoundingClientRect(), avail = window.innerHeight - top;
    if (r.top >= top && r.bottom <= window.innerHeight) return;
    window.scrollBy(0, r.top - top - Math.max((avail - r.height) / 2, 0));
  };

  Section.prototype.rowOfCell = function (cell) {
    var r = +cell.dataset.r;
    return r >= 0 ? this.rows[r] : null;
  };

  Section.prototype.pin = function (row, updateHash) {
    if (this.pinned === row) row = null;
    sections.forEach(function (s) { if (s.pinned) { s.pinned = null; s.show(null); } });
    this.pinned = row;
    this.show(row);
    if (row) { this.revealBytes(row); this.revealRow(row); }
    if (updateHash) {
      var url = location.pathname + location.search + (row ? "#" + encodeURI(row.id) : "");
      history.replaceState(null, "", url);
    }
  };

  Section.prototype.restore = function () {
    this.show(this.pinned);
  };

  Section.prototype.fieldHex = function () {
    var row = this.current;
    if (!row) return "";
    var o = +row.dataset.o, n = +row.dataset.n;
    return this.hex.slice(2 * o, 2 * (o + n));
  };

  Section.prototype.bind = function () {
    var s = this, el = this.el;
    el.addEventListener("mouseover", function (e) {
      if (s.pinned) return;
      var cell = e.target.closest("td.b");
      if (cell) {
        var r = s.rowOfCell(cell);
        s.show(r);
        if (r && s.paneStuck()) s.revealRow(r);
        return;
      }
      var row = e.target.closest("table.tree tbody tr");
      if (row) { s.show(row); s.revealBytes(row); }
    });
    el.addEventListener("mouseleave", function () { s.restore(); });
    el.addEventListener("focusin", function (e) {
      if (s.pinned) return;
      var cell = e.target.closest("td.b");
      if (cell) { s.show(s.rowOfCell(cell)); return; }
      var row = e.target.closest("table.tree tbody tr");
      if (row) s.show(row);
    });
    el.addEventListener("click", function (e) {
      var cell = e.target.closest("td.b");
      if (cell) { s.focusCell(cell); s.pin(s.rowOfCell(cell), true); return; }
      var link = e.target.closest("table.tree tbody th a");
      if (link) {
        e.preventDefault();
        s.pin(link.closest("tr"), true);
        return;
      }
      var btn = e.target.closest("button[data-copy]");
      if (btn) copy(btn, btn.dataset.copy === "frame" ? s.hex : s.fieldHex());
    });
    el.addEventListener("keydown", function (e) {
      var cell = e.target.closest("td.b");
      if (e.key === "Escape" && s.pinned) { s.pin(s.pinned, true); return; }
      if (!cell) return;
      var i = +cell.dataset.o, j = i;
      switch (e.key) {
        case "ArrowRight": j = i + 1; break;
        case "ArrowLeft": j = i - 1; break;
        case "ArrowDown": j = i + 16; break;
        case "ArrowUp": j = i - 16; break;
        case "Home": j = i - (i % 16); break;
        case "End": j = Math.min(i - (i % 16) + 15, s.cells.length - 1); break;
        case "Enter": case " ": e.preventDefault(); s.pin(s.rowOfCell(cell), true); return;
        default: return;
      }
      e.preventDefault();
      if (j >= 0 && j < s.cells.length) s.focusCell(s.cells[j]);
    });
  };

  // focusCell moves the grid's single tab stop (roving tabindex).
  Section.prototype.focusCell = function (cell) {
    this.cells.forEach(function (c) { c.tabIndex = -1; });
    cell.tabIndex = 0;
    cell.focus();
  };

  // copy puts text on the clipboard. Where the Clipboard API is missing
  // (no secure context, e.g. http:// on another host or file://) or
  // refuses, the text goes into a selected field beside the buttons and the
  // status says how to copy it.
  function copy(btn, text) {
    if (!text) return;
    var label = btn.textContent;
    function done(msg) {
      btn.textContent = msg;
      setTimeout(function () { btn.textContent = label; }, 1200);
    }
    function fallback() {
      var tools = btn.closest(".tools") || btn.parentNode;
      var area = $("textarea.copy-fallback", tools);
      if (!area) {
        area = document.createElement("textarea");
        area.className = "copy-fallback";
        area.readOnly = true;
        area.rows = 2;
        area.setAttribute("aria-label", "hex to copy");
        tools.appendChild(area);
      }
      area.value = text;
      area.hidden = false;
      area.focus();
      area.select();
      var out = $("output.sel", tools);
      var msg = "The clipboard is not available here: the hex is selected, press " +
        (/Mac|iP(hone|ad)/.test(navigator.platform) ? "⌘C" : "Ctrl+C") + " to copy it.";
      if (out) out.textContent = msg;
      done("selected");
    }
    if (navigator.clipboard && navigator.clipboard.writeText && window.isSecureContext !== false) {
      navigator.clipboard.writeText(text).then(function () { done("copied"); }, fallback);
    } else {
      fallback();
    }
  }

  function fromHash() {
    var id = "";
    try { id = decodeURIComponent(location.hash.slice(1)); } catch (e) { return; }
    if (!id) return;
    var row = document.getElementById(id);
    if (!row || row.tagName !== "TR") return;
    sections.forEach(function (s) {
      if (s.el.contains(row)) { s.pinned = null; s.pin(row, false); }
    });
  }

  function bindSections(root) {
    $$("section.msg", root).forEach(function (el) {
      if (el.dataset.bound) return;
      el.dataset.bound = "1";
      var s = new Section(el);
      s.bind();
      sections.push(s);
    });
  }

  function initPage() {
    bindSections(document);
    if (sections.length) {
      fromHash();
      window.addEventListener("hashchange", fromHash);
    }
  }

  // ---- decode page -----------------------------------------------------
  // The forms work without script (they post to /decode/); with script
  // they call /api/decode and /api/encode and insert the answered markup.
  function post(url, body) {
    return fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body)
    }).then(function (r) { return r.json(); });
  }

  // The static export built with --wasm decodes in the browser: the
  // decoder (Go compiled to WebAssembly, package server's answers) and the
  // release's specs load on the first decode.
  var wasmReady = null;
  function loadScript(src) {
    return new Promise(function (ok, fail) {
      var s = document.createElement("script");
      s.src = src;
      s.onload = ok;
      s.onerror = function () { fail(new Error("loading " + src + " failed")); };
      document.head.appendChild(s);
    });
  }
  function fetchOK(url) {
    return fetch(url).then(function (r) {
      if (!r.ok) throw new Error(url + ": HTTP " + r.status);
      return r;
    });
  }
  // A page opened from file:// may load a script but not fetch a file:
  // there the specs and the decoder come as scripts that set
  // window.manifesterSpecs (the JSON text) and window.manifesterWasm
  // (base64).
  function fromBase64(s) {
    var bin = atob(s), out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out.buffer;
  }
  function specsText() {
    if (location.protocol !== "file:") return fetchOK(siteURL("/static/specs.json")).then(function (r) { return r.text(); });
    return loadScript(siteURL("/static/specs.js")).then(function () { return window.manifesterSpecs; });
  }
  function wasmBytes() {
    if (location.protocol !== "file:") return fetchOK(siteURL("/static/manifester.wasm")).then(function (r) { return r.arrayBuffer(); });
    return loadScript(siteURL("/static/manifester-wasm.js")).then(function () {
      var b = fromBase64(window.manifesterWasm);
      window.manifesterWasm = null; // the bytes are all the decoder needs
      return b;
    });
  }
  function staticDecoder() {
    if (wasmReady) return wasmReady;
    var t0 = performance.now();
    wasmReady = loadScript(siteURL("/static/wasm_exec.js")).then(function () {
      var go = new window.Go();
      return Promise.all([
        specsText(),
        wasmBytes().then(function (b) { return WebAssembly.instantiate(b, go.importObject); })
      ]).then(function (x) {
        go.run(x[1].instance);
        var err = window.manifesterLoad(x[0]);
        if (err) throw new Error(err);
        document.documentElement.dataset.wasmLoadMs = String(Math.round(performance.now() - t0));
      });
    });
    wasmReady.catch(function () { wasmReady = null; });
    return wasmReady;
  }
  function call(form, op, req) {
    if (form.getAttribute("data-static") === "wasm") {
      return staticDecoder().then(function () {
        return JSON.parse(op === "decode" ? window.manifesterDecode(JSON.stringify(req)) : window.manifesterEncode(JSON.stringify(req)));
      });
    }
    return post(siteURL("/api/" + op), req);
  }

  function showAnswer(target, a, replace) {
    var html = "";
    if (a.error) {
      var p = document.createElement("p");
      p.className = "error";
      p.setAttribute("role", "alert");
      p.textContent = a.error;
      html += p.outerHTML;
    }
    (a.frames || []).forEach(function (f) { html += f.html; });
    if (replace) {
      var tmp = document.createElement("div");
      tmp.innerHTML = html;
      target.replaceWith.apply(target, Array.prototype.slice.call(tmp.childNodes));
    } else {
      target.innerHTML = html;
    }
    relink(replace ? document : target);
    sections = sections.filter(function (s) { return document.body.contains(s.el); });
    bindSections(document);
  }

  function initDecode() {
    var form = $("#decode-form"), results = $("#decode-results");
    if (!form || !results) return;
    var respOnly = $(".resp-only", form);
    function kind() { var k = $("input[name=kind]:checked", form); return k ? k.value : "request"; }
    function toggle() { if (respOnly) respOnly.hidden = kind() !== "response"; }
    $$("input[name=kind]", form).forEach(function (i) { i.addEventListener("change", toggle); });
    toggle();
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var req = { hex: $("#hex", form).value, kind: kind() };
      var secrets = $("#show-secrets", form);
      if (secrets && secrets.checked) req.show_secrets = true;
      if (req.kind === "response") {
        req.api = $("#api", form).value;
        var v = $("#version", form).value.trim();
        if (v !== "") req.version = Number(v);
      }
      results.textContent = "decoding…";
      call(form, "decode", req).then(function (a) { showAnswer(results, a, false); },
        function (err) { results.textContent = "decoding failed: " + err; });
    });
    results.addEventListener("submit", function (e) {
      var f = e.target.closest("form.encode");
      if (!f) return;
      e.preventDefault();
      var body;
      try { body = JSON.parse(f.elements.body.value); } catch (err) {
        var p = f.querySelector("p.error") || document.createElement("p");
        p.className = "error";
        p.textContent = "not JSON: " + err.message;
        f.appendChild(p);
        return;
      }
      var req = {
        kind: f.elements.kind.value, api: f.elements.api.value, version: Number(f.elements.version.value),
        correlation_id: Number(f.elements.correlation_id.value),
        client_id: f.elements.client_id ? f.elements.client_id.value : null, body: body
      };
      var section = f.closest("div.result") || f.closest("section");
      req.index = Number(f.closest("section").id.slice(1)) || 0;
      f.querySelectorAll("p.error").forEach(function (p) { p.remove(); });
      call(form, "encode", req).then(function (a) {
        if (a.frames && a.frames.length) {
          $("#hex", form).value = a.frames[0].hex;
          showAnswer(section, a, true);
          return;
        }
        var p = document.createElement("p");
        p.className = "error";
        p.setAttribute("role", "alert");
        p.textContent = a.error || "encoding failed";
        f.appendChild(p);
      }, function (err) {
        var p = document.createElement("p");
        p.className = "error";
        p.setAttribute("role", "alert");
        p.textContent = "encoding failed: " + err.message;
        f.appendChild(p);
      });
    });
  }

  // The "compare versions" forms (package histsite) go straight to the
  // diff page /apis/<Name>/diff/v<A>..v<B>/, older version first; without
  // script they land on the page listing every pair.
  function initDiffPick() {
    $$("form.diffpick").forEach(function (f) {
      f.addEventListener("submit", function (e) {
        var a = parseInt(f.elements.from.value, 10), b = parseInt(f.elements.to.value, 10);
        if (isNaN(a) || isNaN(b) || a === b) return;
        e.preventDefault();
        var u = new URL(f.getAttribute("data-base") + "v" + Math.min(a, b) + "..v" + Math.max(a, b) + "/", location.href);
        if (u.protocol === "file:") u.pathname += "index.html";
        location.href = u.href;
      });
    });
  }

  function init() {
    if (location.protocol === "file:") relink(document);
    initFilter();
    initPage();
    initDecode();
    initDiffPick();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
