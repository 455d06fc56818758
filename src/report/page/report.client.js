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
  // The kept traces' timelines (src/report/timeline-page.ts): a custom series per span name, each
  // bar a rectangle from its start to its end on its row; the lanes' bands and the links apart.
  function timeline(t) {
    var lane = [];
    t.lanes.forEach(function (l, i) {
      for (var r = l[0]; r < l[0] + l[1]; r++) lane[r] = i;
    });
    var laneNames = t.lanes.map(function (l) {
      return t.rows[l[0]];
    });
    function bar(params, api) {
      var row = api.value(2);
      var a = api.coord([api.value(0), row]);
      var b = api.coord([api.value(1), row]);
      var h = api.size([0, 1])[1] * 0.72;
      var c = params.coordSys;
      var shape = echarts.graphic.clipRectByRect(
        // At least a pixel wide: a state left the moment it was entered still shows.
        { x: a[0], y: a[1] - h / 2, width: Math.max(1, b[0] - a[0]), height: h },
        { x: c.x, y: c.y, width: c.width, height: c.height },
      );
      if (!shape) return null;
      var failed = api.value(4) === 1;
      var element = {
        type: "rect",
        shape: shape,
        style: {
          fill: api.visual("color"),
          stroke: failed ? "#cf222e" : "rgba(0,0,0,0.25)",
          lineWidth: failed ? 2 : 0.5,
        },
      };
      if (shape.width < 48) return element;
      return {
        type: "group",
        children: [
          element,
          {
            type: "text",
            silent: true,
            style: {
              x: shape.x + 3,
              y: shape.y + shape.height / 2,
              text:
                params.seriesName === "(task)"
                  ? (t.notes[api.value(3)] || "task").split(" \u2014 ")[0]
                  : params.seriesName,
              verticalAlign: "middle",
              fontSize: 10,
              fill: "#1f2328",
              width: shape.width - 6,
              overflow: "truncate",
            },
          },
        ],
      };
    }
    function band(params, api) {
      var top = api.coord([0, api.value(0)]);
      var size = api.size([0, 1])[1];
      var c = params.coordSys;
      return {
        type: "rect",
        silent: true,
        shape: { x: c.x, y: top[1] - size / 2, width: c.width, height: size * api.value(1) },
        style: { fill: params.dataIndex % 2 === 0 ? "rgba(208,215,222,0.18)" : "rgba(255,255,255,0)" },
      };
    }
    function link(params, api) {
      var a = api.coord([api.value(0), api.value(1)]);
      var b = api.coord([api.value(2), api.value(3)]);
      return {
        type: "line",
        silent: true,
        shape: { x1: a[0], y1: a[1], x2: b[0], y2: b[1] },
        style: { stroke: "#57606a", lineWidth: 1, lineDash: [4, 3] },
      };
    }
    var series = [
      {
        type: "custom",
        name: "lanes",
        renderItem: band,
        data: t.lanes,
        encode: { y: 0 },
        silent: true,
        z: 0,
        tooltip: { show: false },
      },
    ];
    t.series.forEach(function (s) {
      series.push({
        type: "custom",
        name: s.name,
        renderItem: bar,
        itemStyle: { color: s.color },
        encode: { x: [0, 1], y: 2 },
        data: s.bars,
        z: 2,
      });
    });
    if (t.links.length > 0)
      series.push({
        type: "custom",
        name: "links",
        renderItem: link,
        data: t.links,
        encode: { x: [0, 2], y: [1, 3] },
        z: 3,
        silent: true,
        tooltip: { show: false },
      });
    var rowHeight = t.rows.length > 40 ? 14 : 22;
    chart(
      t.id,
      {
        animation: false,
        tooltip: {
          trigger: "item",
          formatter: function (p) {
            var v = p.value;
            var name = p.seriesName === "(task)" ? "task" : p.seriesName;
            var lines = [p.marker + esc(name) + " on " + esc(laneNames[lane[v[2]]] || "")];
            if (t.notes[v[3]]) lines.push(esc(t.notes[v[3]]));
            lines.push("from +" + esc(seconds(v[0] / 1e6)) + ", lasted " + esc(seconds((v[1] - v[0]) / 1e6)));
            return lines.join("<br>");
          },
        },
        legend: {
          type: "scroll",
          top: 0,
          data: t.series.map(function (s) {
            return s.name;
          }),
        },
        grid: { left: 8, right: 24, top: 34, bottom: 40, containLabel: true },
        dataZoom: [
          { type: "inside", xAxisIndex: 0, filterMode: "weakFilter" },
          { type: "slider", xAxisIndex: 0, filterMode: "weakFilter", height: 16, bottom: 6 },
        ],
        xAxis: {
          type: "value",
          min: 0,
          max: t.duration,
          axisLabel: {
            formatter: function (v) {
              return seconds(v / 1e6);
            },
          },
        },
        yAxis: {
          type: "category",
          inverse: true,
          data: t.rows,
          axisTick: { show: false },
          axisLabel: { interval: 0, width: 180, overflow: "truncate" },
        },
        series: series,
      },
      Math.max(140, rowHeight * t.rows.length + 90),
    );
  }
  (data.timelines || []).forEach(timeline);
  window.addEventListener("resize", function () {
    all.forEach(function (c) {
      c.resize();
    });
  });
})();
