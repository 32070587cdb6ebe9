// The run page's charts, drawn with the vendored plotly.js from JSON in each element's data-chart attribute:
// {x: [rounds], series: [{name, y, color, axis?: "y2"}], percent: bool, title?: str, x_title?: str, y_title?: str,
// y2_title?: str}. The Reward chart is 0-100%; an SFT or DPO run's loss chart counts steps (x_title "Step"). A small
// chart's second line (the Signal beside the Entropy, the Cut-off share beside the Answer length) is in % on a
// right-hand axis, and each axis says its unit.
// They redraw whenever htmx swaps in a new part, so a live page's charts follow the run.
(function () {
  "use strict";

  function draw(element) {
    if (typeof Plotly === "undefined") {
      return;
    }
    var data = JSON.parse(element.getAttribute("data-chart"));
    var small = !!data.title;
    var xTitle = data.x_title || "Round";
    var traces = data.series.map(function (series) {
      var percent = series.axis === "y2" || data.percent;
      return {
        x: data.x, y: series.y, name: series.name, type: "scatter", mode: "lines+markers", yaxis: series.axis || "y",
        connectgaps: false, line: { color: series.color, width: 2, dash: series.axis === "y2" ? "dot" : "solid" },
        marker: { size: small ? 4 : 6 },
        hovertemplate: xTitle + " %{x}: %{y}" + (percent ? "%" : "") + "<extra>" + series.name + "</extra>"
      };
    });
    var second = data.series.filter(function (series) { return series.axis === "y2"; })[0];
    var twoAxes = !!second;
    var unit = function (text) { return text && text !== "%" ? { text: text, font: { size: 11 } } : undefined; };
    var layout = {
      height: small ? 170 : 280,
      margin: small ? { l: 52, r: twoAxes ? 52 : 8, t: 28, b: 28 } : { l: 48, r: 16, t: 8, b: 40 },
      // whole rounds (or steps) only: at most about ten ticks, never a round shown twice
      xaxis: { title: small ? undefined : { text: xTitle }, zeroline: false, tickformat: "d",
               dtick: Math.max(1, Math.ceil(Math.max.apply(null, data.x.concat([1])) / (small ? 5 : 10)))},
      yaxis: data.percent ? { range: [0, 100], ticksuffix: "%", zeroline: false }
                          : { zeroline: false, title: unit(data.y_title) },
      showlegend: !small,
      legend: { orientation: "h", y: 1.14 },
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)",
      font: { family: "system-ui, sans-serif", size: 12, color: "#1d2330" }
    };
    if (small) {
      layout.title = { text: data.title, font: { size: 13 }, x: 0.02, y: 0.97 };
    }
    if (twoAxes) {  // the second line, dotted, is named by its own axis's title rather than a legend
      layout.yaxis2 = { overlaying: "y", side: "right", range: [0, 100], tickvals: [0, 50, 100],
                        ticktext: ["0%", "50%", "100%"], zeroline: false, showgrid: false,
                        title: { text: second.name + " (dotted)", font: { size: 11, color: second.color } } };
    }
    element.setAttribute("aria-label", data.label || data.title || "");
    Plotly.react(element, traces, layout, { displayModeBar: false, responsive: true, staticPlot: false });
  }

  function drawAll(root) {
    root.querySelectorAll("[data-chart]").forEach(draw);
  }

  document.addEventListener("DOMContentLoaded", function () { drawAll(document); });
  document.addEventListener("htmx:afterSettle", function (event) { drawAll(event.target || document); });
})();
