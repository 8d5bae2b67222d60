// Client-side filter of the catalog facet table and hover highlighting of the
// interaction graph.  Written by kbopt.site; no server involved.
(function () {
  "use strict";

  function setupCatalog(root) {
    var selects = root.querySelectorAll("select[data-facet]");
    var text = root.querySelector("#kbopt-facet-text");
    var rows = root.querySelectorAll("tr.kbopt-entry-row");
    var count = root.querySelector("#kbopt-count");
    var empty = root.querySelector("#kbopt-empty");
    var total = rows.length;

    function apply() {
      var wanted = {};
      selects.forEach(function (s) { if (s.value) { wanted[s.dataset.facet] = s.value; } });
      var needle = text && text.value ? text.value.trim().toLowerCase() : "";
      var shown = 0;
      rows.forEach(function (row) {
        var ok = true;
        Object.keys(wanted).forEach(function (facet) {
          var have = (row.getAttribute("data-" + facet) || "").split(" ");
          if (have.indexOf(wanted[facet]) < 0) { ok = false; }
        });
        if (ok && needle) { ok = (row.getAttribute("data-text") || "").indexOf(needle) >= 0; }
        row.hidden = !ok;
        if (ok) { shown += 1; }
      });
      count.textContent = shown + " of " + total + " entries shown";
      count.setAttribute("data-shown", String(shown));
      if (empty) { empty.hidden = shown !== 0; }
    }

    // Presets from the query string, e.g. catalog.html?kind=anti-pattern&language=triton
    var params = new URLSearchParams(window.location.search);
    selects.forEach(function (s) {
      var v = params.get(s.dataset.facet);
      if (v) { s.value = v; }
      s.addEventListener("change", apply);
    });
    if (text) {
      if (params.get("text")) { text.value = params.get("text"); }
      text.addEventListener("input", apply);
    }
    var reset = root.querySelector("#kbopt-facet-reset");
    if (reset) {
      reset.addEventListener("click", function () {
        selects.forEach(function (s) { s.value = ""; });
        if (text) { text.value = ""; }
        apply();
      });
    }
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
