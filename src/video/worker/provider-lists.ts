// The ordered provider lists a worker runs tasks through (before the first chunk a provider failure moves
// on to the next provider, up to 2 retries), built from the parsed lists of the configuration (the default
// list, one per routing hint, and the remote first-frame timeout). "local" runs in this process
// (LocalProvider); a URL is another sightflow node (RemoteProvider).
import type { Services } from '../../services/services.js';
import { hintVariable, type ProviderSpec } from '../../config/providers.js';
import type { ProvidersConfig } from '../../config/index.js';
import { LocalProvider } from './local-provider.js';
import { RemoteProvider } from './remote-provider.js';
import type { VideoProvider } from '../task-contract.js';
import type { StepServices } from '../pipeline/frame-step.js';

export function createProviders(
  s: Pick<Services, 'config' | 'taskModels'> & StepServices,
  lists: ProvidersConfig = s.config.providers,
): { forModel(model?: string): VideoProvider[] } {
  const local = LocalProvider.fromServices(s);
  const build = (specs: readonly ProviderSpec[]): VideoProvider[] =>
    specs.map((p) =>
      p.type === 'local'
        ? local
        : new RemoteProvider({
            url: p.url,
            key: p.key,
            name: p.name,
            firstFrameTimeoutMs: p.timeoutMs ?? lists.timeoutMs,
          }),
    );
  const defaults = build(lists.default);
  const byHint = new Map<string, VideoProvider[]>(Object.entries(lists.byHint).map(([k, v]) => [k, build(v)]));
  return {
    forModel(model?: string): VideoProvider[] {
      if (model) {
        const list = byHint.get(hintVariable(model));
        if (list) return [...list];
      }
      return [...defaults];
    },
  };
}
