/**
 * The history of PPE checks as three charts: the compliance rate over time, the persons missing each item, and
 * the persons per check. Chart.js is loaded here with a dynamic import (lib/ppe-charts.ts), so no other page
 * carries it. The charts follow `checks`: a new check is drawn into the existing charts, not rebuilt. Each
 * chart's canvas has an accessible name that says in words what it shows.
 */
import type { Chart } from 'chart.js';
import { createEffect, createMemo, createSignal, on, onCleanup, onMount, Show } from 'solid-js';
import { type ChartSeries, chartSeries, checksText, type PpeCheck } from '../../lib/ppe-history';

type ChartsModule = typeof import('../../lib/ppe-charts');
type Kind = import('../../lib/ppe-charts').PpeChartKind;

function percent(part: number, whole: number): string {
  return whole === 0 ? '–' : `${Math.round((part / whole) * 100)}%`;
}

function complianceSummary(s: ChartSeries): string {
  if (s.withPersons === 0) return `nobody was in view in the ${checksText(s.total)}.`;
  const last = s.average.at(-1);
  return `${s.compliant} of ${checksText(s.withPersons)} with persons in view compliant (${percent(s.compliant, s.withPersons)})${
    last == null ? '' : `; ${Math.round(last)}% over the last ones`
  }.`;
}

function missingSummary(s: ChartSeries): string {
  if (s.missingItems.length === 0) return 'no item was expected or missing.';
  return `${s.missingItems.map((item, i) => `${item} missing ${s.missingCounts[i]} ${s.missingCounts[i] === 1 ? 'time' : 'times'}`).join(', ')}.`;
}

function personsSummary(s: ChartSeries): string {
  const n = s.total;
  if (n === 0) return 'no checks.';
  const c = s.compliantPersons[n - 1];
  const v = s.violationPersons[n - 1];
  const most = Math.max(...s.compliantPersons.map((x, i) => x + s.violationPersons[i]));
  return `the last check found ${c + v} (${c} compliant, ${v} in violation); at most ${most} in one check.`;
}

function ChartFigure(props: { module: ChartsModule; kind: Kind; title: string; summary: string; series: ChartSeries }) {
  let canvas!: HTMLCanvasElement;
  let chart: Chart | undefined;
  onMount(() => {
    chart = props.module.createPpeChart(canvas, props.kind, props.series);
  });
  createEffect(
    on(
      () => props.series,
      (s) => {
        if (chart) props.module.updatePpeChart(chart, props.kind, s);
      },
      { defer: true },
    ),
  );
  onCleanup(() => chart?.destroy());
  const id = `safety-chart-${props.kind}`;
  return (
    <figure class="safety-chart" data-testid={id}>
      <figcaption id={`${id}-title`}>{props.title}</figcaption>
      <div class="safety-chart-box">
        <canvas ref={canvas} role="img" aria-label={`${props.title}: ${props.summary}`} data-checks={props.series.total} />
      </div>
    </figure>
  );
}

export function SafetyCharts(props: { checks: readonly PpeCheck[]; expected: readonly string[]; error?: string }) {
  // Loaded as the history shows, not with the page: a signal, not a resource, so the page does not suspend meanwhile.
  const [module, setModule] = createSignal<ChartsModule>();
  const [loadFailed, setLoadFailed] = createSignal(false);
  onMount(() => {
    import('../../lib/ppe-charts').then(
      (m) => setModule(() => m),
      () => setLoadFailed(true),
    );
  });
  const series = createMemo(() => chartSeries(props.checks, props.expected));
  const since = () => {
    const first = props.checks[0];
    return first ? new Date(first.time).toLocaleString() : '';
  };

  return (
    <section class="card safety-history" data-testid="safety-history" aria-labelledby="safety-history-title">
      <div class="safety-history-head">
        <h2 id="safety-history-title">History</h2>
        <p class="muted" data-testid="history-count">
          {checksText(series().total)}
          <Show when={series().total > 0}>
            {' '}
            since {since()} · {percent(series().compliant, series().withPersons)} compliant
          </Show>
        </p>
      </div>
      <Show when={props.error}>
        <p class="safety-history-error" role="alert">
          The history could not be read: {props.error}
        </p>
      </Show>
      <Show
        when={series().total > 0}
        fallback={
          <p class="safety-history-empty" data-testid="history-empty">
            No checks yet. Each check of the camera or a photo is added here.
          </p>
        }
      >
        <Show
          when={module()}
          fallback={
            <p role="status" class="muted">
              {loadFailed() ? 'The charts could not be loaded. Reload the page to try again.' : 'Loading the charts…'}
            </p>
          }
        >
          {(m) => (
            <div class="safety-charts">
              <ChartFigure
                module={m()}
                kind="compliance"
                title="Compliance rate over time"
                summary={complianceSummary(series())}
                series={series()}
              />
              <ChartFigure
                module={m()}
                kind="missing"
                title="Violations by missing item"
                summary={missingSummary(series())}
                series={series()}
              />
              <ChartFigure module={m()} kind="persons" title="Persons per check" summary={personsSummary(series())} series={series()} />
            </div>
          )}
        </Show>
      </Show>
    </section>
  );
}
