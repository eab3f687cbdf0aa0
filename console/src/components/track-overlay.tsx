// Boxes of one frame drawn over the video as positioned elements (percentages of the source frame size), so
// they follow the player's size and can be inspected in the DOM; one colour per track.
import type { Target } from '../api/types';
import { trackColour } from '../track-colours';

export function TrackOverlay(props: { targets: Target[]; width: number; height: number }) {
  const pct = (v: number, of: number) => `${(v / of) * 100}%`;
  return (
    <div class="overlay" aria-hidden="true">
      {props.targets.map((t, i) => {
        const c = trackColour(t.track_id);
        return (
          // A label above a box at the top edge would be clipped: it goes inside the box there.
          <div
            key={`${t.track_id}-${i}`}
            class={t.roi.top / props.height < 0.08 ? 'box label-inside' : 'box'}
            data-track-id={t.track_id}
            data-class={t.class}
            style={{
              left: pct(t.roi.left, props.width),
              top: pct(t.roi.top, props.height),
              width: pct(t.roi.width, props.width),
              height: pct(t.roi.height, props.height),
              borderColor: c,
            }}
          >
            <span class="box-label" style={{ background: c }}>
              {t.class} #{t.track_id} {Math.round(t.confidence * 100)}%{t.text ? ` “${t.text}”` : ''}
            </span>
          </div>
        );
      })}
    </div>
  );
}
