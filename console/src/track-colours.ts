// One stable colour per track id: golden-angle hue steps keep neighbouring ids far apart on the wheel.
export function trackColour(trackId: number): string {
  const hue = Math.round((trackId * 137.508) % 360);
  return `hsl(${hue} 85% 55%)`;
}
