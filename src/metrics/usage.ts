// Billed usage as counters: every ledger row, once written, adds its units here, so the counters agree
// exactly with the ledger's totals (GET /admin/v1/projects/:id/usage) for what this process wrote since it
// started. Projects are a label unless SIGHTFLOW_METRICS_PROJECT_LABEL=false (then one total per kind):
// an installation with very many projects keeps its series bounded.
import { metricsOn, projectLabelOn } from './registry.js';
import { ValueFamily } from './series.js';

const units = new ValueFamily(
  'sightflow_usage_units_total',
  'Billed units written to the usage ledger, by project and kind (requests, input_tokens, output_tokens, frames, ms: the columns of the usage report)',
);

export interface UsageUnits {
  projectId: string;
  inputTokens?: number;
  outputTokens?: number;
  frames?: number;
  ms?: number;
}

/** Called after a ledger row is written, with the values as written (the ledger's rounding). */
export function countUsage(e: UsageUnits): void {
  if (!metricsOn) return;
  const by = projectLabelOn() ? (kind: string) => ({ project: e.projectId, kind }) : (kind: string) => ({ kind });
  units.add(by('requests'), 1);
  units.add(by('input_tokens'), Math.round(e.inputTokens ?? 0));
  units.add(by('output_tokens'), Math.round(e.outputTokens ?? 0));
  units.add(by('frames'), Math.round(e.frames ?? 0));
  units.add(by('ms'), Math.round(e.ms ?? 0));
}
