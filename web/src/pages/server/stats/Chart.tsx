import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import styles from './Stats.module.css';

const HEIGHT = 200;

interface ChartProps {
  /** The chart's accessible name, e.g. "CPU over the last 5 minutes". */
  readonly name: string;
  /** The value axis' label, with its unit. */
  readonly axisLabel: string;
  /** The value axis' width in pixels, label and tick values included. */
  readonly axisSize: number;
  /** Times in seconds, then values (null: a gap). */
  readonly data: readonly [number[], (number | null)[]];
  /** A value as the axis shows it, with its unit. */
  readonly format: (value: number) => string;
  /** The top of the value axis for the largest value shown. */
  readonly top: (max: number) => number;
  /** The design token the line is drawn in. */
  readonly colour: '--accent' | '--focus';
  /** The text alternative: the latest value and the range, shown under the chart. */
  readonly children: ReactNode;
}

const darkScheme = () => window.matchMedia('(prefers-color-scheme: dark)');

/** Light or dark, following the system as the tokens do. */
function useScheme(): 'light' | 'dark' {
  const [dark, setDark] = useState(() => darkScheme().matches);
  useEffect(() => {
    const query = darkScheme();
    const changed = () => {
      setDark(query.matches);
    };
    query.addEventListener('change', changed);
    return () => {
      query.removeEventListener('change', changed);
    };
  }, []);
  return dark ? 'dark' : 'light';
}

/**
 * One uPlot line chart over time. To a screen reader it is an image with a name, described by
 * the text under it; the canvas itself says nothing. Its colours come from the design tokens
 * (read again when the system switches between light and dark), and it takes the width of its
 * container, whatever that becomes.
 */
export function Chart({
  name,
  axisLabel,
  axisSize,
  data,
  format,
  top,
  colour,
  children,
}: ChartProps) {
  const holder = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const summaryId = useId();
  const scheme = useScheme();
  // The latest props for uPlot's callbacks, which are set once per chart.
  const latest = useRef({ data, format, top });

  useEffect(() => {
    const element = holder.current;
    if (element === null) return undefined;
    const tokens = getComputedStyle(element);
    const token = (name: string) => tokens.getPropertyValue(name).trim();
    const line = token(colour);
    const muted = token('--muted');
    const grid = token('--border');
    const font = `12px ${token('--font')}`;
    const axis = {
      stroke: muted,
      font,
      labelFont: `600 ${font}`,
      grid: { stroke: grid, width: 1 },
      ticks: { stroke: grid, width: 1 },
    };
    const created = new uPlot(
      {
        width: Math.max(element.clientWidth, 100),
        height: HEIGHT,
        legend: { show: false },
        cursor: { show: false },
        scales: {
          x: { time: true },
          y: { range: (_self, _min, max) => [0, latest.current.top(Math.max(max, 0))] },
        },
        axes: [
          { ...axis, label: 'Time', labelSize: 20 },
          {
            ...axis,
            label: axisLabel,
            labelSize: 20,
            size: axisSize,
            values: (_self, splits) => splits.map((value) => latest.current.format(value)),
          },
        ],
        series: [
          {},
          {
            label: axisLabel,
            stroke: line,
            width: 2,
            // The line's colour at a fifth of its strength under it.
            fill: /^#[0-9a-f]{6}$/i.test(line) ? `${line}33` : undefined,
            spanGaps: false,
            points: { show: false },
          },
        ],
      },
      [latest.current.data[0], latest.current.data[1]],
      element,
    );
    plot.current = created;
    const resized = new ResizeObserver((entries) => {
      const width = entries[0]?.contentRect.width ?? 0;
      if (width > 0) created.setSize({ width, height: HEIGHT });
    });
    resized.observe(element);
    return () => {
      resized.disconnect();
      created.destroy();
      plot.current = null;
    };
  }, [axisLabel, axisSize, colour, scheme]);

  useEffect(() => {
    latest.current = { data, format, top };
    plot.current?.setData([data[0], data[1]]);
  }, [data, format, top]);

  return (
    <figure className={styles.figure}>
      <div
        ref={holder}
        className={styles.chart}
        role="img"
        aria-label={name}
        // How many readings the chart holds, for the journeys to wait on (the canvas tells nothing).
        data-samples={data[0].length}
        aria-describedby={summaryId}
      />
      <figcaption id={summaryId} className={styles.summary}>
        {children}
      </figcaption>
    </figure>
  );
}
