// The catalog's facet filter and the interaction graph's hover highlighting.
// Written by kbopt.site; everything runs in the browser, no server involved.
//
// The filter behaves like the command line:
// - a language keeps the shared entries (as `kbopt recommend --language` does) unless
//   "with shared entries" is unticked;
// - the words box matches words: every word of the query must start a word of the
//   entry's id, title, triggers, contexts or bottlenecks ("split kv" finds split-kv-decode);
// - each option shows how many entries it would leave, given the other filters;
// - the state lives in the URL (history.replaceState), so a filtered view can be shared:
//   catalog.html?kind=anti-pattern&language=triton&shared=0&q=split+kv&sort=evidence-desc
//   Values the page does not know are reported above the table, not silently dropped.
(function () {
  "use strict";

  var SHARED = "shared";

  function words(text) {
    return (text || "").toLowerCase().split(/[^a-z0-9]+/).filter(function (w) { return w; });
  }

  function setupCatalog(root) {
    var selects = Array.prototype.slice.call(root.querySelectorAll("select[data-facet]"));
    var text = root.querySelector("#kbopt-facet-text");
    var shared = root.querySelector("#kbopt-facet-shared");
    var tbody = root.querySelector("#kbopt-catalog-table tbody");
    var rows = Array.prototype.slice.call(root.querySelectorAll("tr.kbopt-entry-row"));
    var count = root.querySelector("#kbopt-count");
    var empty = root.querySelector("#kbopt-empty");
    var problems = root.querySelector("#kbopt-url-problems");
    var headers = Array.prototype.slice.call(root.querySelectorAll("th[data-sort]"));
    var total = rows.length;
    var sort = { key: "", desc: false };

    rows.forEach(function (row, i) {
      row._kbopt = {
        order: i,
        tokens: words(row.getAttribute("data-text")),
        facets: {}
      };
      selects.forEach(function (s) {
        var f = s.dataset.facet;
        row._kbopt.facets[f] = (row.getAttribute("data-" + f) || "").split(" ");
      });
    });
    selects.forEach(function (s) {
      Array.prototype.forEach.call(s.options, function (o) {
        if (o.value) { o.dataset.label = o.value; }
      });
    });

    function state() {
      var wanted = {};
      selects.forEach(function (s) { if (s.value) { wanted[s.dataset.facet] = s.value; } });
      return {
        wanted: wanted,
        query: words(text ? text.value : ""),
        shared: !shared || shared.checked
      };
    }

    function facetMatch(row, facet, value, st) {
      var have = row._kbopt.facets[facet];
      if (have.indexOf(value) >= 0) { return true; }
      // A language keeps the shared entries, as the command line does.
      return facet === "language" && st.shared && value !== SHARED && have.indexOf(SHARED) >= 0;
    }

    function textMatch(row, query) {
      var tokens = row._kbopt.tokens;
      return query.every(function (w) {
        return tokens.some(function (t) { return t.indexOf(w) === 0; });
      });
    }

    function matches(row, st, skip) {
      for (var facet in st.wanted) {
        if (facet !== skip && !facetMatch(row, facet, st.wanted[facet], st)) { return false; }
      }
      return textMatch(row, st.query);
    }

    function updateCounts(st) {
      selects.forEach(function (s) {
        var facet = s.dataset.facet;
        var others = rows.filter(function (row) { return matches(row, st, facet); });
        Array.prototype.forEach.call(s.options, function (o) {
          if (!o.value) { return; }
          var n = others.filter(function (row) {
            return facetMatch(row, facet, o.value, st);
          }).length;
          o.textContent = o.dataset.label + " (" + n + ")";
          o.disabled = n === 0 && s.value !== o.value;
          o.dataset.count = String(n);
        });
      });
    }

    function writeUrl(st) {
      var params = new URLSearchParams();
      selects.forEach(function (s) { if (s.value) { params.set(s.dataset.facet, s.value); } });
      if (!st.shared) { params.set("shared", "0"); }
      if (text && text.value.trim()) { params.set("q", text.value.trim()); }
      if (sort.key) { params.set("sort", sort.key + (sort.desc ? "-desc" : "")); }
      var search = params.toString();
      var url = window.location.pathname + (search ? "?" + search : "") + window.location.hash;
      window.history.replaceState(null, "", url);
    }

    function sortRows() {
      var ordered = rows.slice();
      if (sort.key) {
        ordered.sort(function (a, b) {
          var va, vb;
          if (sort.key === "evidence" || sort.key === "impact") {
            var attr = sort.key === "impact" ? "data-impact-rank" : "data-evidence";
            va = Number(a.getAttribute(attr)); vb = Number(b.getAttribute(attr));
          } else if (sort.key === "name") {
            va = a.getAttribute("data-name"); vb = b.getAttribute("data-name");
          } else {
            va = a.getAttribute("data-" + sort.key) || ""; vb = b.getAttribute("data-" + sort.key) || "";
          }
          var c = va < vb ? -1 : va > vb ? 1 : a._kbopt.order - b._kbopt.order;
          return sort.desc ? -c : c;
        });
      }
      ordered.forEach(function (row) { tbody.appendChild(row); });
      headers.forEach(function (th) {
        if (th.dataset.sort === sort.key) {
          th.setAttribute("aria-sort", sort.desc ? "descending" : "ascending");
        } else {
          th.removeAttribute("aria-sort");
        }
      });
    }

    function apply() {
      var st = state();
      var shown = 0;
      rows.forEach(function (row) {
        var ok = matches(row, st, null);
        row.hidden = !ok;
        if (ok) { shown += 1; }
      });
      updateCounts(st);
      count.textContent = shown + " of " + total + " entries shown";
      count.setAttribute("data-shown", String(shown));
      if (empty) { empty.hidden = shown !== 0; }
      writeUrl(st);
    }

    // The state from the URL; anything the page does not know is reported.
    var params = new URLSearchParams(window.location.search);
    var unknown = [];
    var known = { shared: 1, q: 1, text: 1, sort: 1 };
    selects.forEach(function (s) {
      var facet = s.dataset.facet;
      known[facet] = 1;
      var v = params.get(facet);
      if (v === null || v === "") { return; }
      var ok = Array.prototype.some.call(s.options, function (o) { return o.value === v; });
      if (ok) { s.value = v; } else { unknown.push(facet + "=" + v + " (not a " + facet + " value)"); }
    });
    if (shared && params.get("shared") !== null) {
      var sv = params.get("shared");
      if (sv === "0" || sv === "1") { shared.checked = sv === "1"; }
      else { unknown.push("shared=" + sv + " (use 0 or 1)"); }
    }
    if (text) { text.value = params.get("q") || params.get("text") || ""; }
    if (params.get("sort")) {
      var sv2 = params.get("sort");
      var key = sv2.replace(/-desc$/, "");
      if (headers.some(function (th) { return th.dataset.sort === key; })) {
        sort.key = key; sort.desc = /-desc$/.test(sv2);
      } else {
        unknown.push("sort=" + sv2 + " (not a sortable column)");
      }
    }
    params.forEach(function (_v, k) {
      if (!known[k]) { unknown.push(k + " (not a filter of this table)"); }
    });
    if (problems && unknown.length) {
      problems.textContent = "Ignored in this link: " + unknown.join("; ") + ".";
      problems.hidden = false;
    }

    selects.forEach(function (s) { s.addEventListener("change", apply); });
    if (text) { text.addEventListener("input", apply); }
    if (shared) { shared.addEventListener("change", apply); }
    headers.forEach(function (th) {
      th.setAttribute("tabindex", "0");
      function toggle() {
        if (sort.key === th.dataset.sort) { sort.desc = !sort.desc; }
        else { sort.key = th.dataset.sort; sort.desc = th.dataset.sort === "evidence" || th.dataset.sort === "impact"; }
        sortRows();
        apply();
      }
      th.addEventListener("click", toggle);
      th.addEventListener("keydown", function (ev) { if (ev.key === "Enter") { toggle(); } });
    });
    var reset = root.querySelector("#kbopt-facet-reset");
    if (reset) {
      reset.addEventListener("click", function () {
        selects.forEach(function (s) { s.value = ""; });
        if (text) { text.value = ""; }
        if (shared) { shared.checked = true; }
        sort.key = ""; sort.desc = false;
        sortRows();
        if (problems) { problems.hidden = true; }
        apply();
      });
    }
    sortRows();
    apply();
  }

  function setupGraph(svg) {
    var edges = svg.querySelectorAll("[data-edge]");
    svg.querySelectorAll("g.kbopt-node").forEach(function (node) {
      var name = node.getAttribute("data-name");
      node.addEventListener("mouseenter", function () {
        svg.classList.add("kbopt-focus");
        node.classList.add("kbopt-active");
        edges.forEach(function (e) {
          if (e.getAttribute("data-source") === name || e.getAttribute("data-target") === name) {
            e.classList.add("kbopt-active");
          }
        });
      });
      node.addEventListener("mouseleave", function () {
        svg.classList.remove("kbopt-focus");
        svg.querySelectorAll(".kbopt-active").forEach(function (e) {
          e.classList.remove("kbopt-active");
        });
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll(".kbopt-catalog").forEach(setupCatalog);
    document.querySelectorAll("svg.kbopt-graph").forEach(setupGraph);
  });
})();
