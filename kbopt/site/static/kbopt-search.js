// Site search: rank catalog entries above API and reference pages.
// Sphinx's searchtools.js asks Scorer.score(result) for every hit (result =
// [docname, title, anchor, descr, score, filename, kind]).  This scorer keeps Sphinx's
// own score for ties and adds, for an entry page, how well the query's words match
// the entry's id, title and triggers (window.KBOPT_ENTRIES, written by kbopt.site).
// Loaded on the search page only, after searchtools.js (docs/_templates/search.html).
(function () {
  "use strict";
  if (typeof Scorer === "undefined") { return; }
  var ENTRY = "generated/entries/";
  var entries = window.KBOPT_ENTRIES || {};

  function words(text) {
    return (text || "").toLowerCase().split(/[^a-z0-9]+/).filter(function (w) { return w; });
  }

  var query = words(new URLSearchParams(window.location.search).get("q"));

  // Fraction of `tokens` that some query word starts (0 when a query word matches none).
  function coverage(tokens) {
    if (!query.length || !tokens.length) { return 0; }
    var used = {};
    for (var i = 0; i < query.length; i++) {
      var hit = -1;
      for (var j = 0; j < tokens.length; j++) {
        if (tokens[j].indexOf(query[i]) === 0) { hit = j; used[j] = true; }
      }
      if (hit < 0) { return 0; }
    }
    return Object.keys(used).length / tokens.length;
  }

  Scorer.score = function (result) {
    var docname = result[0], score = result[4];
    if (docname.indexOf(ENTRY) === 0 && docname !== ENTRY + "index") {
      var name = docname.slice(ENTRY.length);
      var meta = entries[name] || {};
      var boost = 100;  // any entry page above any other page
      boost += 300 * coverage(words(name));
      boost += 150 * coverage(words(meta.title));
      boost += 100 * coverage(words(meta.triggers));
      return score + boost;
    }
    if (docname.indexOf("generated/api/") === 0) { return score - 50; }
    return score;
  };
})();
