// The eval eye's filters. Rows are rendered (and escaped) on the server; this script only reads data-*
// attributes and toggles a class, so nothing a system under test said is ever turned into markup here.
(function () {
  "use strict";
  var model = document.getElementById("eye-model");
  var metric = document.getElementById("eye-metric");
  var failed = document.getElementById("eye-failed");
  var count = document.getElementById("eye-count");
  var cards = Array.prototype.slice.call(document.querySelectorAll("#eye-rows > .eye-card"));
  if (!model || !metric || !failed || !count) { return; }

  function failingMetrics(card) {
    var value = card.getAttribute("data-failed-metrics") || "";
    return value ? value.split(" ") : [];
  }

  function showMetricRows(card, chosen) {
    var evaluator = chosen ? chosen.split("/")[0] : "";
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
      showMetricRows(card, chosenMetric);
      if (visible) { shown += 1; }
    });
    count.textContent = shown + " of " + cards.length + " rows shown";
  }

  model.addEventListener("change", apply);
  metric.addEventListener("change", apply);
  failed.addEventListener("change", apply);
  apply();
})();
