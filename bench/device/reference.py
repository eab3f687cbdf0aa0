#!/usr/bin/env python3
"""The reference of scripts/gpu-check.sh on the host's own Python packages, on the same ONNX model sightflow
runs (given a free batch axis by `gpu-check.js batch-graph`): a TensorRT FP16 engine through the host's
tensorrt package, else ONNX Runtime's CUDA provider with the graph in FP16 (inputs and outputs kept float32)
and IO binding (input and outputs on the device), else none. Device buffers come from PyTorch where TensorRT
needs them. Images/s at each batch is the batch times the runs a second of one stream, run after run.

  python3 reference.py --which                        the engine this host can build ('none: why' if none)
  python3 reference.py --to-fp16 IN.onnx OUT.onnx     the graph in float16 by ONNX Runtime's converter
  python3 reference.py --model M.onnx --input NAME --dims 1,3,640,640 --batch 1,8,32 --seconds 5 --out R.json
"""
import argparse
import json
import sys
import time


def which():
    try:
        import tensorrt  # noqa: F401
        import torch
        if torch.cuda.is_available():
            return 'tensorrt'
    except Exception:
        pass
    try:
        import onnxruntime as ort
        if 'CUDAExecutionProvider' in ort.get_available_providers():
            return 'ort-cuda'
        return 'none: the host has ONNX Runtime %s without its CUDA provider and no TensorRT package' % ort.__version__
    except Exception:
        return 'none: the host has neither TensorRT nor ONNX Runtime for Python'


def timed(step, sync, seconds):
    """Runs step() for `seconds` after a warm-up; answers runs a second and the median latency in ms."""
    for _ in range(5):
        step()
    sync()
    lat = []
    end = time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < end:
        t0 = time.perf_counter()
        step()
        sync()
        lat.append((time.perf_counter() - t0) * 1000)
    wall = time.perf_counter() - start
    lat.sort()
    return len(lat) / wall, lat[len(lat) // 2]


def tensorrt_rows(model, name, dims, batches, seconds):
    import numpy as np
    import tensorrt as trt
    import torch
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    network = builder.create_network(0)
    parser = trt.OnnxParser(network, logger)
    with open(model, 'rb') as f:
        if not parser.parse(f.read()):
            raise RuntimeError('TensorRT could not parse the model: %s' % parser.get_error(0))
    config = builder.create_builder_config()
    config.set_flag(trt.BuilderFlag.FP16)
    top = max(batches)
    profile = builder.create_optimization_profile()
    profile.set_shape(name, (1, *dims[1:]), (min(8, top), *dims[1:]), (top, *dims[1:]))
    config.add_optimization_profile(profile)
    t0 = time.perf_counter()
    plan = builder.build_serialized_network(network, config)
    build_s = time.perf_counter() - t0
    engine = trt.Runtime(logger).deserialize_cuda_engine(plan)
    ctx = engine.create_execution_context()
    stream = torch.cuda.Stream()
    rows = []
    for b in batches:
        ctx.set_input_shape(name, (b, *dims[1:]))
        keep = []
        for i in range(engine.num_io_tensors):
            n = engine.get_tensor_name(i)
            dt = torch.from_numpy(np.empty(0, dtype=trt.nptype(engine.get_tensor_dtype(n)))).dtype
            t = torch.rand(tuple(ctx.get_tensor_shape(n)), device='cuda').to(dt)
            keep.append(t)
            ctx.set_tensor_address(n, t.data_ptr())
        per_s, p50 = timed(lambda: ctx.execute_async_v3(stream.cuda_stream), stream.synchronize, seconds)
        rows.append({'batch': b, 'images_per_s': round(per_s * b, 1), 'p50_ms': round(p50, 2)})
    return {'engine': 'tensorrt-python', 'version': trt.__version__, 'precision': 'fp16', 'build_s': round(build_s, 1), 'rows': rows}


def ort_cuda_rows(model, name, dims, batches, seconds):
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnxruntime.transformers.float16 import convert_float_to_float16
    precision = 'fp16'
    try:
        graph = convert_float_to_float16(onnx.load(model), keep_io_types=True).SerializeToString()
    except Exception as e:  # an int8 graph may not convert: run it as it is
        graph, precision = open(model, 'rb').read(), 'as exported (fp16 conversion failed: %s)' % e
    sess = ort.InferenceSession(graph, providers=['CUDAExecutionProvider'])
    rows = []
    for b in batches:
        io = sess.io_binding()
        x = ort.OrtValue.ortvalue_from_numpy(np.random.rand(b, *dims[1:]).astype(np.float32), 'cuda', 0)
        io.bind_ortvalue_input(name, x)
        for o in sess.get_outputs():
            io.bind_output(o.name, 'cuda')
        per_s, p50 = timed(lambda: sess.run_with_iobinding(io), lambda: None, seconds)
        rows.append({'batch': b, 'images_per_s': round(per_s * b, 1), 'p50_ms': round(p50, 2)})
    return {'engine': 'onnxruntime-cuda-iobinding', 'version': ort.__version__, 'precision': precision, 'rows': rows}


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--which', action='store_true')
    p.add_argument('--to-fp16', nargs=2, metavar=('IN', 'OUT'))
    p.add_argument('--model')
    p.add_argument('--input')
    p.add_argument('--dims')
    p.add_argument('--batch', default='1,8,32')
    p.add_argument('--seconds', type=float, default=5)
    p.add_argument('--out')
    a = p.parse_args()
    if a.to_fp16:
        # The graph in float16 by ONNX Runtime's own converter (inputs and outputs kept float32), for the C++
        # reference (ort-reference.cc) on a host whose onnxruntime for Python has no CUDA provider.
        import onnx
        from onnxruntime.transformers.float16 import convert_float_to_float16
        onnx.save(convert_float_to_float16(onnx.load(a.to_fp16[0]), keep_io_types=True), a.to_fp16[1])
        return
    engine = which()
    if a.which:
        print(engine)
        return
    dims = [int(d) for d in a.dims.split(',')]
    batches = [int(b) for b in a.batch.split(',')]
    try:
        if engine == 'tensorrt':
            result = tensorrt_rows(a.model, a.input, dims, batches, a.seconds)
        elif engine == 'ort-cuda':
            result = ort_cuda_rows(a.model, a.input, dims, batches, a.seconds)
        else:
            result = {'engine': 'none', 'reason': engine[len('none: '):]}
    except Exception as e:
        result = {'engine': engine, 'error': '%s: %s' % (type(e).__name__, e)}
    text = json.dumps(result, indent=2)
    if a.out:
        with open(a.out, 'w') as f:
            f.write(text + '\n')
    print(text)


if __name__ == '__main__':
    sys.exit(main())
