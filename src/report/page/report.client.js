/*
 * The report page's own script (src/report/html.ts inlines it into every page, without this
 * comment): reads the chart data embedded as JSON in #taskjourney-data and draws the charts with
 * ECharts. Plain ES5 in one function, so it runs in any browser without a build step; it holds no
 * user data, and every name it puts into a tooltip goes through esc().
 */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("taskjourney-data").textContent);
  var ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  function esc(text) {
    return String(text).replace(/[&<>"']/g, function (c) {
      return ESC[c];
    });
  }
  function seconds(s) {
    if (s === null || !isFinite(s)) return "-";
    if (s === 0) return "0 s";
    if (s < 0.001) return (s * 1e6).toFixed(1) + " \u00b5s";
    if (s < 1) return (s * 1000).toFixed(1) + " ms";
    return s.toFixed(1) + " s";
  }
  if (typeof echarts === "undefined") {
    var charts = document.querySelectorAll(".chart");
    for (var i = 0; i < charts.length; i++)
      charts[i].textContent = "(chart left out: this page was written without ECharts)";
    return;
  }

  var all = [];
  function chart(id, option, height) {
    var element = document.getElementById(id);
    if (!element) return;
    if (height) element.style.height = height + "px";
    var instance = echarts.init(element, null, { renderer: "canvas" });
    instance.setOption(option);
    all.push(instance);
  }
  function axisTooltip(params) {
    var lines = [esc(params[0].axisValue)];
    var total = 0;
    params.forEach(function (p) {
      total += p.value || 0;
    });
    params.forEach(function (p) {
      if (!p.value) return;
      lines.push(
        p.marker +
          esc(p.seriesName) +
          ": " +
          esc(seconds(p.value)) +
          " (" +
          (total > 0 ? ((100 * p.value) / total).toFixed(1) : "-") +
          "%)",
      );
    });
    lines.push("total: " + esc(seconds(total)));
    return lines.join("<br>");
  }
  function stacked(id, block) {
    if (!document.getElementById(id)) return;
    if (block.prefixes.length === 0 || block.series.length === 0) {
      document.getElementById(id).textContent = "(nothing recorded)";
      document.getElementById(id).style.height = "auto";
      return;
    }
    var height = Math.max(260, 34 * block.prefixes.length + 110);
    chart(
      id,
      {
        animation: false,
        tooltip: { trigger: "axis", axisPointer: { type: "shadow" }, formatter: axisTooltip },
        legend: { type: "scroll", top: 0 },
        grid: { left: 8, right: 24, top: 40, bottom: 8, containLabel: true },
        xAxis: { type: "value", axisLabel: { formatter: seconds } },
        yAxis: {
          type: "category",
          inverse: true,
          data: block.prefixes,
          axisLabel: { width: 220, overflow: "truncate" },
        },
        series: block.series.map(function (s) {
          var series = { name: s.name, type: "bar", stack: "total", data: s.data, emphasis: { focus: "series" } };
          // Each series' colour comes with the data (src/report/palette.ts): none repeats in a chart.
          if (s.color) series.itemStyle = { color: s.color };
          return series;
        }),
      },
      height,
    );
  }
  function bars(id, entries, color) {
    // A section that does not apply is left out of the page, its chart with it.
    if (!document.getElementById(id)) return;
    if (entries.length === 0) {
      // The table under the chart says "(nothing recorded)" already.
      document.getElementById(id).style.display = "none";
      return;
    }
    var total = 0;
    entries.forEach(function (e) {
      total += e[1];
    });
    chart(
      id,
      {
        animation: false,
        tooltip: {
          trigger: "item",
          formatter: function (p) {
            return esc(p.name) + ": " + esc(seconds(p.value)) + " (" + ((100 * p.value) / total).toFixed(1) + "%)";
          },
        },
        grid: { left: 8, right: 90, top: 8, bottom: 8, containLabel: true },
        xAxis: { type: "value", axisLabel: { formatter: seconds } },
        yAxis: {
          type: "category",
          inverse: true,
          data: entries.map(function (e) {
            return e[0];
          }),
          axisLabel: { width: 160, overflow: "truncate" },
        },
        series: [
          {
            type: "bar",
            data: entries.map(function (e) {
              return e[1];
            }),
            itemStyle: { color: color },
            label: {
              show: true,
              position: "right",
              formatter: function (p) {
                return seconds(p.value) + "  " + ((100 * p.value) / total).toFixed(1) + "%";
              },
            },
          },
        ],
      },
      Math.max(200, 30 * entries.length + 40),
    );
  }
  stacked("chart-states", data.states);
  bars("chart-execute", data.execute, "#6aa84f");
  bars("chart-gather", data.gather, "#9b6fc3");
  stacked("chart-wait", data.wait);
  if (data.slowest) {
    var root = data.slowest;
    chart("chart-slowest", {
      animation: false,
      tooltip: {
        formatter: function (p) {
          var path = (p.treePathInfo || [])
            .slice(1)
            .map(function (n) {
              return esc(n.name);
            })
            .join(" / ");
          return (path || esc(p.name)) + ": " + esc(seconds(p.value));
        },
      },
      series: [
        {
          type: "sunburst",
          data: root.children,
          radius: ["12%", "92%"],
          sort: null,
          nodeClick: "rootToNode",
          label: { rotate: "radial", minAngle: 8, overflow: "truncate", width: 90 },
          levels: [
            {},
            { r0: "12%", r: "52%", label: { rotate: "tangential" } },
            { r0: "52%", r: "90%", label: { align: "right" } },
            { r0: "90%", r: "96%", label: { show: false } },
          ],
        },
      ],
    });
  }
  window.addEventListener("resize", function () {
    all.forEach(function (c) {
      c.resize();
    });
  });
})();
