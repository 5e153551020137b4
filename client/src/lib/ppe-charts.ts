/**
 * The Safety page's three charts, drawn with Chart.js. Only the pieces used are registered (line and bar
 * charts on category and linear scales, with legend and tooltips), and this module is loaded with a dynamic
 * import by the charts' component, so Chart.js stays out of every other page's load.
 */
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  type ChartConfiguration,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from 'chart.js';
import type { ChartSeries } from './ppe-history';
import { COMPLIANT_COLOR, VIOLATION_COLOR } from './ppe-overlay';

Chart.register(LineController, BarController, LineElement, PointElement, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

export type PpeChartKind = 'compliance' | 'missing' | 'persons';

const ACCENT = '#1d4ed8';
const GRID = '#e3e6ee';
const TEXT = '#4a5060';

/** Options all three share: fill their box, no animation (a live page redraws every second or so). */
function base(): ChartConfiguration['options'] {
  return {
    responsive: true,
    maintainAspectRatio: false,
    animation: false,
    plugins: { legend: { labels: { color: TEXT, boxWidth: 12 } }, tooltip: { intersect: false, mode: 'index' } },
  };
}

function data(kind: PpeChartKind, s: ChartSeries): ChartConfiguration['data'] {
  switch (kind) {
    case 'compliance':
      return {
        labels: s.labels,
        datasets: [
          {
            type: 'line',
            label: 'Compliance rate (last 10 checks)',
            data: s.average,
            borderColor: ACCENT,
            backgroundColor: ACCENT,
            borderWidth: 2,
            pointRadius: 0,
            cubicInterpolationMode: 'monotone',
            spanGaps: true,
          },
          {
            type: 'line',
            label: 'Each check (100 compliant, 0 violation)',
            data: s.compliance,
            showLine: false,
            pointRadius: 3,
            // The points sit on 0 and 100: drawn whole, not cut by the chart's edge.
            clip: false,
            pointBackgroundColor: s.compliance.map((v) => (v === 100 ? COMPLIANT_COLOR : VIOLATION_COLOR)),
            pointBorderColor: 'transparent',
            borderColor: TEXT,
            backgroundColor: TEXT,
          },
        ],
      };
    case 'missing':
      return {
        labels: s.missingItems,
        datasets: [
          { type: 'bar', label: 'Persons missing it', data: s.missingCounts, backgroundColor: VIOLATION_COLOR, maxBarThickness: 56 },
        ],
      };
    case 'persons':
      return {
        labels: s.labels,
        datasets: [
          { type: 'bar', label: 'Compliant', data: s.compliantPersons, backgroundColor: COMPLIANT_COLOR, stack: 'persons' },
          { type: 'bar', label: 'Violation', data: s.violationPersons, backgroundColor: VIOLATION_COLOR, stack: 'persons' },
        ],
      };
  }
}

function scales(kind: PpeChartKind): NonNullable<ChartConfiguration['options']>['scales'] {
  const x = { ticks: { color: TEXT, maxRotation: 0, autoSkip: true, maxTicksLimit: 6 }, grid: { display: false } };
  switch (kind) {
    case 'compliance':
      return {
        x,
        y: { min: 0, max: 100, ticks: { color: TEXT, stepSize: 25, callback: (v) => `${v}%` }, grid: { color: GRID } },
      };
    case 'missing':
      return { x: { ...x, ticks: { color: TEXT } }, y: { beginAtZero: true, ticks: { color: TEXT, precision: 0 }, grid: { color: GRID } } };
    case 'persons':
      return {
        x: { ...x, stacked: true },
        y: { stacked: true, beginAtZero: true, ticks: { color: TEXT, precision: 0 }, grid: { color: GRID } },
      };
  }
}

export function createPpeChart(canvas: HTMLCanvasElement, kind: PpeChartKind, series: ChartSeries): Chart {
  const options = { ...base(), scales: scales(kind) };
  if (kind === 'missing') options.plugins = { ...options.plugins, legend: { display: false } };
  return new Chart(canvas, { type: kind === 'compliance' ? 'line' : 'bar', data: data(kind, series), options } as ChartConfiguration);
}

/** New data into an existing chart (its datasets keep their order and styles), redrawn at once. */
export function updatePpeChart(chart: Chart, kind: PpeChartKind, series: ChartSeries): void {
  const next = data(kind, series);
  chart.data.labels = next.labels;
  next.datasets.forEach((d, i) => {
    const current = chart.data.datasets[i];
    if (!current) return;
    current.data = d.data;
    if (kind === 'compliance' && i === 1)
      (current as { pointBackgroundColor?: unknown }).pointBackgroundColor = (d as { pointBackgroundColor?: unknown }).pointBackgroundColor;
  });
  chart.update('none');
}
