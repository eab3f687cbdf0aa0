// The analytics rules drawn over the video (an SVG in source-frame pixels, stretched over the player like the
// boxes): lines with an arrow to their `in` side, zones as polygons, the rule being placed, and the heatmap
// image under them. With a tool chosen it takes clicks and reports them in source pixels.
import type { Point } from '../api/types';
import { inNormal, type Drawing, type Size } from '../analytics-rules';

/** `heatmap.frame`: the source-frame size the image covers (the recorded frame, or the boxes' extent). */
export function RulesLayer(props: {
  space: Size;
  drawing: Drawing;
  heatmap: { url: string; frame: Size } | null;
  onPoint(p: Point): void;
}) {
  const { width: w, height: h } = props.space;
  const d = props.drawing;
  const click = (e: MouseEvent) => {
    if (!d.tool) return;
    const r = (e.currentTarget as SVGSVGElement).getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) return;
    e.preventDefault();
    props.onPoint([((e.clientX - r.left) / r.width) * w, ((e.clientY - r.top) / r.height) * h]);
  };
  const unit = Math.max(w, h) / 100;
  const pts = (ps: Point[]) => ps.map((p) => p.join(',')).join(' ');
  return (
    <>
      {props.heatmap && (
        <img
          class="heatmap"
          src={props.heatmap.url}
          alt="Heatmap of where the tracks were"
          data-testid="heatmap"
          style={{
            width: `${(props.heatmap.frame.width / w) * 100}%`,
            height: `${(props.heatmap.frame.height / h) * 100}%`,
          }}
        />
      )}
      <svg
        class={d.tool ? 'rules-layer drawing' : 'rules-layer'}
        viewBox={`0 0 ${w} ${h}`}
        preserveAspectRatio="none"
        onClick={click}
        data-testid="rules-layer"
        role={d.tool ? 'application' : undefined}
        aria-label={d.tool ? `Click on the frame to place the ${d.tool}` : undefined}
      >
        {d.zones.map((z) => (
          <g key={z.id} class="zone" data-rule={z.id}>
            <polygon points={pts(z.polygon)} vector-effect="non-scaling-stroke" />
            <text x={z.polygon[0]![0]} y={z.polygon[0]![1]} font-size={unit * 3}>
              {z.id}
            </text>
          </g>
        ))}
        {d.lines.map((l) => {
          const [[ax, ay], [bx, by]] = l.points;
          const [nx, ny] = inNormal(l);
          const mx = (ax + bx) / 2,
            my = (ay + by) / 2;
          return (
            <g key={l.id} class="line" data-rule={l.id}>
              <line x1={ax} y1={ay} x2={bx} y2={by} vector-effect="non-scaling-stroke" />
              <line
                class="in-arrow"
                x1={mx}
                y1={my}
                x2={mx + nx * unit * 5}
                y2={my + ny * unit * 5}
                vector-effect="non-scaling-stroke"
              />
              <text x={mx + nx * unit * 6} y={my + ny * unit * 6} font-size={unit * 3}>
                {l.id} in
              </text>
            </g>
          );
        })}
        {d.draft.length > 0 && (
          <g class="draft">
            <polyline points={pts(d.draft)} vector-effect="non-scaling-stroke" />
            {d.draft.map((p, i) => (
              <circle key={i} cx={p[0]} cy={p[1]} r={unit * 0.8} />
            ))}
          </g>
        )}
      </svg>
    </>
  );
}
