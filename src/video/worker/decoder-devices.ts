// Which GPU a video task's NVIDIA decoder runs on, on a host with several: the card with the fewest decoders
// open now (the lowest ordinal on a tie), held for the task's life and given back when its decoder closes,
// so cameras spread over the cards and a card freed by ended tasks takes the next ones.

export class DecoderDevices {
  private readonly open = new Map<number, number>();

  /** `devices`: the CUDA ordinals to use (gpu-devices.ts chooseGpuDevices); empty: no choice (device 0). */
  constructor(readonly devices: readonly number[]) {
    for (const d of devices) this.open.set(d, 0);
  }

  /** The device for a decoder about to open; undefined without devices. Give it back with give(). */
  take(): number | undefined {
    let best: number | undefined;
    for (const d of this.devices) if (best === undefined || this.open.get(d)! < this.open.get(best)!) best = d;
    if (best !== undefined) this.open.set(best, this.open.get(best)! + 1);
    return best;
  }

  give(device: number | undefined): void {
    if (device === undefined) return;
    const n = this.open.get(device);
    if (n) this.open.set(device, n - 1);
  }

  /** Decoders open now, by device. */
  counts(): Record<number, number> {
    return Object.fromEntries(this.open);
  }
}
