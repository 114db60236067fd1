// The eval eye's rows and filters. Rows are rendered (and escaped) on the server and packed into the page;
// they are unpacked once the rest of the page is drawn, so opening the report never waits for hundreds of cases.
// The filters only read data-* attributes and toggle a class: nothing a system under test said is ever turned
// into markup here.
(function () {
  "use strict";
  var model = document.getElementById("eye-model");
  var metric = document.getElementById("eye-metric");
  var failed = document.getElementById("eye-failed");
  var count = document.getElementById("eye-count");
  var rows = document.getElementById("eye-rows");
  var more = document.getElementById("eye-more");
  var PAGE = 25;  // rows drawn at a time: all of them made the report hundreds of thousands of pixels tall
  var limit = PAGE;
  var cards = [];
  if (!model || !metric || !failed || !count || !rows || !more) { return; }

  function failingMetrics(card) {
    var value = card.getAttribute("data-failed-metrics") || "";
    return value ? value.split(" ") : [];
  }

  function showMetricRows(card, chosen) {
    var evaluator = chosen ? chosen.split("/")[0] : "";
    var table = card.querySelector("details.eye-all-metrics");
    if (table) { table.open = chosen !== ""; }  // a chosen metric is shown without a click
    card.querySelectorAll("tr[data-metric]").forEach(function (row) {
      row.classList.toggle("eye-hidden", chosen !== "" && row.getAttribute("data-metric") !== chosen);
    });
    card.querySelectorAll("tr[data-metric-group]").forEach(function (row) {
      row.classList.toggle("eye-hidden", chosen !== "" && row.getAttribute("data-metric-group") !== evaluator);
    });
  }

  function apply() {
    var chosenModel = model.value;
    var chosenMetric = metric.value;
    var onlyFailed = failed.checked;
    var shown = 0;
    cards.forEach(function (card) {
      var failing = failingMetrics(card);
      var visible = chosenModel === "" || card.getAttribute("data-model") === chosenModel;
      if (visible && chosenMetric !== "") {
        visible = card.querySelector('tr[data-metric="' + CSS.escape(chosenMetric) + '"]') !== null;
      }
      if (visible && onlyFailed) {
        visible = chosenMetric === "" ? failing.length > 0 : failing.indexOf(chosenMetric) >= 0;
      }
      card.classList.toggle("eye-hidden", !visible);
      card.classList.toggle("eye-folded", visible && shown >= limit);
      showMetricRows(card, chosenMetric);
      if (visible) { shown += 1; }
    });
    count.textContent = shown + " of " + cards.length + " rows match" + (shown > limit ? ", the first " + limit + " shown" : "");
    more.hidden = shown <= limit;
    more.textContent = "Show " + Math.min(PAGE, shown - limit) + " more of " + (shown - limit);
  }

  function refilter() {
    limit = PAGE;
    apply();
  }

  function load() {
    assayUnpack(rows.getAttribute("data-packed")).then(function (html) {
      rows.innerHTML = html;
      rows.removeAttribute("data-packed");
      cards = Array.prototype.slice.call(rows.querySelectorAll("#eye-rows > .eye-card"));
      model.addEventListener("change", refilter);
      metric.addEventListener("change", refilter);
      failed.addEventListener("change", refilter);
      more.addEventListener("click", function () { limit += PAGE; apply(); });
      apply();
    });
  }

  // After the figures: each chart drawn measures the page, which is slow once thousands of rows are in it.
  function start() { Promise.resolve(window.assayPlotly).catch(function () { return null; }).then(load); }
  if (document.readyState === "complete") { setTimeout(start, 0); } else { window.addEventListener("load", start); }
})();
