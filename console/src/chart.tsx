export interface Series {
  label: string;
  values: Array<number | null>;
  /** Its colour (an index of the palette), so one tool keeps one colour in every chart; default its position. */
  color?: number;
}

const WIDTH = 600;
const HEIGHT = 180;
// The axis labels are 20 units of a 600-unit-wide drawing: about 11 px where a chart is 330 px wide.
const PAD = { left: 64, right: 10, top: 14, bottom: 30 };
/** The last colour is the neutral one, for a total beside the tools. */
export const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#6b7280'];

const niceMax = (value: number): number => {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5, 10].map((m) => m * power).find((candidate) => candidate >= value) ?? value;
};

/**
 * A line chart drawn as SVG by the app (no chart library, nothing fetched): one polyline per series over
 * the minutes, a y axis from 0, the first and last minute on the x axis. Labels are text nodes.
 */
export function LineChart({ title, series, minutes, unit }: { title: string; series: Series[]; minutes: string[]; unit: string }) {
  const max = niceMax(Math.max(0, ...series.flatMap((s) => s.values.filter((v): v is number => v !== null))));
  const innerW = WIDTH - PAD.left - PAD.right;
  const innerH = HEIGHT - PAD.top - PAD.bottom;
  const x = (i: number) => PAD.left + (minutes.length <= 1 ? 0 : (i / (minutes.length - 1)) * innerW);
  const y = (v: number) => PAD.top + innerH - (v / max) * innerH;
  const label = (iso: string | undefined) => (iso ? new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : '');
  const summary = series.map((s) => `${s.label}: latest ${s.values.at(-1) ?? 'none'} ${unit}`).join('; ');
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={`${title}. ${summary}`}>
        {[0, 0.5, 1].map((f) => (
          <g key={f}>
            <line x1={PAD.left} x2={WIDTH - PAD.right} y1={y(max * f)} y2={y(max * f)} class="grid" />
            <text x={PAD.left - 6} y={y(max * f) + 7} class="axis" text-anchor="end">{Number((max * f).toPrecision(3))}</text>
          </g>
        ))}
        <text x={PAD.left} y={HEIGHT - 6} class="axis">{label(minutes[0])}</text>
        <text x={WIDTH - PAD.right} y={HEIGHT - 6} class="axis" text-anchor="end">{label(minutes.at(-1))}</text>
        {series.map((s, index) => {
          const points = s.values.map((v, i) => (v === null ? null : `${x(i).toFixed(1)},${y(v).toFixed(1)}`)).filter(Boolean).join(' ');
          const color = COLORS[(s.color ?? index) % COLORS.length];
          // Dots as well as the line: a minute with calls between empty minutes is still visible.
          return (
            <g key={s.label}>
              <polyline points={points} fill="none" stroke={color} stroke-width="2" />
              {s.values.map((v, i) => (v === null || v === 0 ? null : <circle key={i} cx={x(i)} cy={y(v)} r="3" fill={color} />))}
            </g>
          );
        })}
      </svg>
      <ul class="legend">
        {series.map((s, index) => (
          <li key={s.label}>
            <span class={`swatch c${(s.color ?? index) % COLORS.length}`} aria-hidden="true" />
            {s.label}
          </li>
        ))}
      </ul>
    </figure>
  );
}
