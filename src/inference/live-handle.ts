// A part's hold on one model's runtime handle that follows the model. A handle is let go when its model's
// settings change or its manifest is replaced (the runtime forgets it and its sessions); a part that kept it
// (a detector, OCR, an embedder) would then run on a forgotten handle with the old settings, beside the new
// one that requests register, both loading sessions into the same worker threads. Through this, the next run
// takes the handle registered now, or registers the model anew from the registry.
import type { InferenceRuntime, ModelSpec } from './runtime.js';
import type { ModelHandle } from './model-handle.js';

export class LiveHandle {
  private current: ModelHandle;

  /** `onNew`: called with each handle this comes to hold (the first included), to set it up as the part needs. */
  constructor(
    private readonly runtime: InferenceRuntime,
    private readonly registry: { spec(id: string): ModelSpec },
    readonly id: string,
    private readonly onNew?: (h: ModelHandle) => void,
  ) {
    this.current = runtime.register(registry.spec(id));
    onNew?.(this.current);
  }

  /** The model's handle in force. */
  get(): ModelHandle {
    const live = this.runtime.model(this.id);
    if (live === this.current) return live;
    this.current = live ?? this.runtime.register(this.registry.spec(this.id));
    this.onNew?.(this.current);
    return this.current;
  }
}
