// Gatehouse console: the traffic charts (uPlot). Each [data-traffic] panel shows requests per step
// by status class and p50/p95 latency from GET /dashboard/traffic, for the last hour or day, and
// reloads them every few seconds.
(function () {
  'use strict';
  const gatehouse = window.gatehouse;
  const REFRESH_MS = 5000;
  const HEIGHT = 220;
  const CLASS_COLORS = { '1xx': '#8b5cf6', '2xx': '#16a34a', '3xx': '#2563eb', '4xx': '#d97706', '5xx': '#dc2626' };
  const LATENCY = [
    { key: 'p50', label: 'p50 (ms)', color: '#0891b2' },
    { key: 'p95', label: 'p95 (ms)', color: '#db2777' },
  ];
  const RANGE_WORDS = { '1h': { span: 'hour', step: 'minute' }, '1d': { span: 'day', step: '5 minutes' } };
  const count = new Intl.NumberFormat();

  function axisColors() {
    const style = getComputedStyle(document.body);
    return { text: style.color, grid: style.getPropertyValue('--line').trim() || 'rgba(128,128,128,.3)' };
  }

  /**
   * uPlot options for one chart. `stacked`: the series are drawn as stacked areas (each band filled
   * down to the one below) while the legend shows each series' own value from `own()`.
   */
  function chartOptions(box, series, yLabel, stacked, own) {
    const colors = axisColors();
    const axis = { stroke: colors.text, grid: { stroke: colors.grid, width: 1 }, ticks: { stroke: colors.grid } };
    return {
      width: Math.max(240, box.clientWidth),
      height: HEIGHT,
      scales: { x: { time: true }, y: { range: (u, min, max) => [0, Math.max(1, max)] } },
      axes: [axis, Object.assign({ label: yLabel, size: 56 }, axis)],
      series: [{}].concat(series.map((s, i) => ({
        label: s.label,
        stroke: s.color,
        width: stacked ? 1 : 2,
        fill: stacked ? `${s.color}66` : undefined,
        points: stacked ? { show: false } : { show: true, size: 5, fill: s.color },
        value: stacked ? (u, v, seriesIdx, idx) => (idx === null ? '--' : own()[seriesIdx - 1][idx]) : undefined,
      }))),
      bands: stacked ? series.slice(1).map((s, i) => ({ series: [i + 2, i + 1] })) : [],
    };
  }

  /** Running sums of the rows of `own`, bottom series first: what a stacked chart plots. */
  function stack(own) {
    const sums = own.length ? own[0].map(() => 0) : [];
    return own.map((row) => row.map((v, i) => (sums[i] += v)));
  }

  function setUp(panel) {
    const summary = panel.querySelector('[data-chart-summary]');
    const caption = panel.querySelector('[data-caption="requests"]');
    const boxes = { requests: panel.querySelector('[data-chart="requests"]'), latency: panel.querySelector('[data-chart="latency"]') };
    let range = '1h';
    let charts = null;
    let shape = '';
    let timer;
    /** Requests per status class and step, as the legend shows them (the chart plots their running sums). */
    let perClass = [];
    /** Each load's number; an answer that a newer load overtook is dropped. */
    let generation = 0;

    function destroy() {
      if (charts) for (const chart of Object.values(charts)) chart.destroy();
      charts = null;
    }

    function draw(series) {
      const points = series.points;
      const x = points.map((p) => Date.parse(p.time) / 1000);
      const classes = ['2xx', '3xx', '4xx', '5xx'].concat(points.some((p) => p['1xx'] > 0) ? ['1xx'] : []);
      perClass = classes.map((c) => points.map((p) => p[c]));
      const requestsData = [x].concat(stack(perClass));
      const latencyData = [x].concat(LATENCY.map((l) => points.map((p) => p[l.key])));
      const nextShape = `${series.range}:${classes.join(',')}`;
      if (!charts || shape !== nextShape) {
        destroy();
        const classSeries = classes.map((c) => ({ label: c, color: CLASS_COLORS[c] }));
        const stepWord = RANGE_WORDS[series.range].step;
        caption.textContent = `Requests per ${stepWord}, by status class`;
        charts = {
          requests: new uPlot(chartOptions(boxes.requests, classSeries, `requests / ${stepWord}`, true, () => perClass), requestsData, boxes.requests),
          latency: new uPlot(chartOptions(boxes.latency, LATENCY, 'ms', false), latencyData, boxes.latency),
        };
        shape = nextShape;
      } else {
        charts.requests.setData(requestsData);
        charts.latency.setData(latencyData);
      }
      describe(series);
    }

    /** A sentence for everyone (and the figures' data attributes, which tests read). */
    function describe(series) {
      const points = series.points;
      const total = points.reduce((sum, p) => sum + p.requests, 0);
      const errors = points.reduce((sum, p) => sum + p['5xx'], 0);
      const p95s = points.map((p) => p.p95).filter((v) => v !== null);
      boxes.requests.dataset.total = String(total);
      boxes.requests.dataset.points = String(points.filter((p) => p.requests > 0).length);
      boxes.latency.dataset.points = String(p95s.length);
      const span = RANGE_WORDS[series.range].span;
      summary.classList.remove('error');
      summary.textContent = total === 0
        ? `No requests in the last ${span}. Requests through the gateway appear here within a few seconds.`
        : `${count.format(total)} requests in the last ${span}, ${count.format(errors)} with a 5xx status; highest p95 latency ${count.format(Math.max.apply(null, p95s))} ms.`;
    }

    async function load() {
      clearTimeout(timer);
      const mine = ++generation;
      const query = new URLSearchParams({ range });
      if (panel.dataset.serviceId) query.set('serviceId', panel.dataset.serviceId);
      if (!document.hidden) {
        try {
          const series = await gatehouse.api('GET', `/dashboard/traffic?${query}`);
          if (mine === generation) draw(series);
        } catch (error) {
          if (mine === generation) {
            summary.textContent = `Could not load the traffic charts: ${error.message}`;
            summary.classList.add('error');
          }
        }
      }
      if (mine === generation) timer = setTimeout(load, REFRESH_MS);
    }

    for (const button of panel.querySelectorAll('button[data-range]')) {
      button.addEventListener('click', () => {
        range = button.dataset.range;
        for (const other of panel.querySelectorAll('button[data-range]')) other.setAttribute('aria-pressed', String(other === button));
        load();
      });
    }
    new ResizeObserver(() => {
      if (charts) for (const [name, chart] of Object.entries(charts)) chart.setSize({ width: Math.max(240, boxes[name].clientWidth), height: HEIGHT });
    }).observe(panel);
    load();
  }

  for (const panel of document.querySelectorAll('[data-traffic]')) setUp(panel);
})();
