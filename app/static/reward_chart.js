// The Reward chart of the run page: reward and validation by round, 0-100%, drawn with the vendored plotly.js.
// It redraws whenever htmx swaps in a new rounds part.
(function () {
  "use strict";

  function draw(element) {
    if (typeof Plotly === "undefined") {
      return;
    }
    var data = JSON.parse(element.getAttribute("data-reward-chart"));
    var traces = [
      { x: data.rounds, y: data.reward, name: "Reward", mode: "lines+markers", connectgaps: false,
        line: { color: "#2952cc" } },
      { x: data.rounds, y: data.validation, name: "Validation", mode: "lines+markers",
        line: { color: "#1a7f37" } }
    ];
    var layout = {
      height: 260, margin: { l: 48, r: 16, t: 8, b: 36 },
      xaxis: { title: { text: "Round" }, dtick: 1, zeroline: false },
      yaxis: { range: [0, 100], ticksuffix: "%", zeroline: false },
      legend: { orientation: "h", y: 1.12 },
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)"
    };
    Plotly.react(element, traces, layout, { displayModeBar: false, responsive: true });
  }

  function drawAll(root) {
    root.querySelectorAll("[data-reward-chart]").forEach(draw);
  }

  document.addEventListener("DOMContentLoaded", function () { drawAll(document); });
  document.addEventListener("htmx:afterSettle", function () { drawAll(document); });
})();
