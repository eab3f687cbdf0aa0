// A model as a float16 export makes it (Ultralytics' `export half=True`): weights and arithmetic in float16 and
// the graph's inputs and outputs declared float16. No such export of a COCO detector could be had here, so one is
// made from a float graph: sightflow's own float16 rewrite (which keeps float32 edges) with the Casts at the
// edges taken out. An int8 export is made float first, as a GPU provider loads it. For the tests and the eval.
import onnxProto from 'onnx-proto';
import { dequantizeGraph } from '../../src/inference/dequantize-graph.js';
import { withFloat16 } from '../../src/inference/fp16-graph.js';

const { onnx } = onnxProto;
const FLOAT16 = 10;

export function halfExport(bytes: Uint8Array): Uint8Array {
  const float = dequantizeGraph(bytes);
  if (!float.ok) throw new Error(`half export: ${float.reason}`);
  const half = withFloat16(float.bytes);
  if (!half.ok) throw new Error(`half export: ${half.reason}`);
  const model = onnx.ModelProto.decode(half.bytes);
  const g = model.graph!;
  const nodes = g.node ?? [];
  const drop = new Set<object>();
  const rename = new Map<string, string>();
  for (const i of g.input ?? []) {
    // The Cast after a float input: its readers read the input itself, now float16.
    const cast = nodes.find((n) => n.opType === 'Cast' && n.input?.[0] === i.name);
    if (!cast) continue;
    drop.add(cast);
    rename.set(cast.output![0]!, i.name!);
    i.type!.tensorType!.elemType = FLOAT16;
  }
  for (const o of g.output ?? []) {
    // The Cast before a float output: what it read is made under the output's name.
    const cast = nodes.find((n) => n.opType === 'Cast' && n.output?.[0] === o.name);
    if (!cast) continue;
    drop.add(cast);
    rename.set(cast.input![0]!, o.name!);
    o.type!.tensorType!.elemType = FLOAT16;
  }
  // The declarations of what is now float16 under the edges' names say so.
  const halfNames = new Set([...rename.values()]);
  for (const vi of g.valueInfo ?? []) if (halfNames.has(vi.name ?? '')) vi.type!.tensorType!.elemType = FLOAT16;
  g.node = nodes
    .filter((n) => !drop.has(n))
    .map((n) => {
      n.input = (n.input ?? []).map((x) => rename.get(x) ?? x);
      n.output = (n.output ?? []).map((x) => rename.get(x) ?? x);
      return n;
    });
  return onnx.ModelProto.encode(model).finish();
}
