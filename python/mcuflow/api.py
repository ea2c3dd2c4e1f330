"""The Python API: ``mcuflow.compile`` and ``Program``.

Python only moves data: the graph goes to the C++ compiler through ``_core.GraphBuilder``, the
program bytes come back, and ``Program.run`` executes them with the C++ host runtime.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from . import _core, program_metadata
from .errors import DeviceError, InputError, UnsupportedModelError, run_failure
from .firmware_sources import PROGRAM_MAGIC, FirmwareSourcesError, op_kernel_ids
from .fit import flash_advice
from .inputs import arrays_by_input_name
from .options import CompileOptions
from .outputs import write_file
from .progress import PROGRESS_MIN_SAMPLES, CountingBar

# Program metadata "source" key listing the calibration samples' hashes (see sample_hash).
CALIBRATION_SAMPLES_KEY = "calibration_sample_sha256"


def sample_hash(sample: Sequence[np.ndarray]) -> str:
    """The first 16 hex digits of the SHA-256 of one sample's float32 bytes (inputs in order, each
    C-contiguous in PyTorch layout): how validate matches evaluation samples against calibration
    samples. 64 bits keep the list short in the program file and collisions negligible."""
    digest = hashlib.sha256()
    for x in sample:
        digest.update(np.ascontiguousarray(x, dtype=np.float32).tobytes())
    return digest.hexdigest()[:16]


_KERNEL_NAMES = {i: name for name, i in _core.kernel_ids().items()}


def load_failure_message(failure: str, data: bytes) -> str:
    """A Program::load failure as host and board report it, codes only ("<error>[ tensor <t>][ op
    <i>][ slot <s>]"), as one line naming the record: the op with its kernel (from its record)
    and model source line, or the tensor with its name (from the metadata, when the program holds
    readable metadata), e.g. "op 12 dwconv_s8_dsp (model.py:33): bad_params"."""
    m = re.fullmatch(r"(\w+)((?: (?:tensor|op|slot) \d+)*)", failure.strip())
    if not m or not m[2]:
        return failure
    where = {k: int(v) for k, v in re.findall(r"(tensor|op|slot) (\d+)", m[2])}
    metadata = program_metadata.readable(data)
    if "op" in where:
        i = where["op"]
        try:
            kernel_ids = op_kernel_ids(data)
        except FirmwareSourcesError:
            kernel_ids = []
        kernel = _KERNEL_NAMES.get(kernel_ids[i], "?") if i < len(kernel_ids) else "?"
        ops = metadata.get("ops", [])
        source = ops[i].get("source") if i < len(ops) and isinstance(ops[i], dict) else None
        text = f"op {i} {kernel}" + (f" ({source})" if source else "")
        if "slot" in where:
            text += f", input {where['slot']}"
    else:
        t = where["tensor"]
        tensors = metadata.get("tensors", [])
        name = tensors[t].get("name") if t < len(tensors) and isinstance(tensors[t], dict) else None
        text = f"tensor {t}" + (f" ({name})" if name else "")
    return f"{text}: {m[1]}"


class Program:
    """A compiled mcuflow program (the bytes of a ``.mfp`` file) and its host runtime."""

    def __init__(self, data: bytes, *, verify: str = "full"):
        """`verify`: the loader's level (docs/program_format.md, "Verification levels"): "full"
        checks both CRC-32s and every prepared table, "structure" what a board's later wake checks."""
        if verify not in ("full", "structure"):
            raise InputError(f"verify is 'full' or 'structure', got {verify!r}")
        if not isinstance(data, (bytes, bytearray)):
            raise InputError(f"a program is bytes, got {type(data).__name__}")
        if data[:4] != PROGRAM_MAGIC:
            raise InputError("not an mcuflow program (bad magic; expected an .mfp file)")
        try:
            self._host = _core.HostProgram(bytes(data), verify)
        except ValueError as e:
            message = str(e)
            if message.startswith("invalid program: "):
                message = "invalid program: " + load_failure_message(message.removeprefix("invalid program: "), bytes(data))
            raise InputError(message) from None
        self.data = bytes(data)
        self.metadata = program_metadata.parse(self.data, len(self._host.tensors), len(self._host.ops))
        for kind, io in (("input", self._host.inputs), ("output", self._host.outputs)):
            for i, spec in enumerate(io):  # what the host converts from and to PyTorch's order
                if spec["layout"] != "plain" and (spec["layout"] != "nhwc" or len(spec["shape"]) not in (3, 4)):
                    raise InputError(f"corrupt program: {kind} {i} (tensor {spec['tensor']}) has layout "
                                     f"{spec['layout']} at rank {len(spec['shape'])}; program inputs and outputs "
                                     f"are plain or NHWC of rank 3 or 4")

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Program":
        try:
            data = Path(path).read_bytes()
        except OSError as e:
            raise InputError(f"cannot read program {path}: {e.strerror}") from None
        try:
            return cls(data)
        except InputError as e:
            raise InputError(f"{path}: {e}") from None

    @property
    def device_image(self) -> bytes:
        """The bytes firmware stores: the program without its metadata (tools read it, the
        device never does), so flash holds only what runs."""
        return _core.strip_metadata(self.data)

    def save(self, path: str | os.PathLike) -> None:
        """Writes the program atomically (outputs.write_file): a failed write never leaves a
        partial file, and the file gets the user's umask."""
        write_file(path, self.data)

    # --- facts ---

    @property
    def inputs(self) -> list[dict]:
        """Per input: dtype, shape (logical), layout, quantization, ``tensor`` (its index) and
        ``name`` (the model's, from the metadata; None in a program without it)."""
        return self._named(self._host.inputs)

    @property
    def outputs(self) -> list[dict]:
        return self._named(self._host.outputs)

    def _named(self, io: list[dict]) -> list[dict]:
        tensors = self.metadata.get("tensors", [])
        for d in io:
            d["name"] = tensors[d["tensor"]]["name"] if d["tensor"] < len(tensors) else None
        return io

    @property
    def arena_bytes(self) -> int:
        return self._host.arena_bytes

    @property
    def region_bytes(self) -> list[int]:
        """Planned bytes of each memory region, region 0 (``arena_bytes``) first."""
        return list(self._host.region_bytes)

    @property
    def arena_lower_bound(self) -> int:
        return self._host.arena_lower_bound

    @property
    def kernels(self) -> list[str]:
        """The kernel of each op, named from the op records' kernel ids: what the device links
        and loads (the metadata, absent from a device image, is not consulted)."""
        names = {kernel_id: name for name, kernel_id in _core.kernel_ids().items()}
        return [names[op["kernel"]] for op in self._host.ops]

    @property
    def header(self) -> dict:
        return dict(self._host.header)

    @property
    def precision(self) -> str:
        return self.metadata.get("precision", "?")

    # --- execution ---

    def _batched_inputs(self, inputs) -> tuple[list[np.ndarray], int, bool]:
        if isinstance(inputs, (np.ndarray,)) or hasattr(inputs, "detach"):
            inputs = [inputs]
        elif isinstance(inputs, Mapping):
            inputs = arrays_by_input_name(inputs, [spec["name"] for spec in self.inputs], "the inputs dict")
        arrays = []
        for x in inputs:
            if hasattr(x, "detach"):
                x = x.detach().cpu().numpy()
            arrays.append(np.asarray(x))
        if len(arrays) != len(self.inputs):
            raise InputError(f"the program takes {len(self.inputs)} input(s), got {len(arrays)}")
        batch, batched = None, False
        for i, (a, spec) in enumerate(zip(arrays, self.inputs)):
            shape = tuple(spec["shape"])
            if a.dtype != spec["dtype"]:
                if spec["dtype"] == np.float32 and a.dtype in (np.float64, np.float16):
                    arrays[i] = a = a.astype(np.float32)
                elif spec["dtype"] == np.int32 and np.issubdtype(a.dtype, np.integer):  # int64 token ids
                    if a.size and (a.min() < np.iinfo(np.int32).min or a.max() > np.iinfo(np.int32).max):
                        raise InputError(f"input {i} holds ids outside int32")
                    arrays[i] = a = a.astype(np.int32)
                else:
                    raise InputError(f"input {i} has dtype {a.dtype}; the program expects {spec['dtype']}")
            if a.shape == shape:
                n, is_batched = 1, False
            elif len(shape) >= 1 and shape[0] == 1 and a.shape[1:] == shape[1:] and a.ndim == len(shape):
                n, is_batched = a.shape[0], True
            else:
                raise InputError(f"input {i} has shape {list(a.shape)}; the program expects {list(shape)}"
                                 f" (or a batch of them along dim 0)")
            if n == 0:
                raise InputError(f"input {i} holds no samples (a batch of 0)")
            if batch is not None and n != batch:
                raise InputError(f"inputs have different batch sizes ({batch} and {n})")
            batch, batched = n, batched or is_batched
        return arrays, batch or 1, batched

    def run(self, inputs, threads: int | None = None) -> list[np.ndarray]:
        """Runs the host runtime. ``inputs``: one array per model input (or a single array),
        in PyTorch layout; a leading batch dimension runs every sample, returned stacked along
        dim 0. Returns one array per output. ``threads``: how many threads share a batch (each
        with its own arena; default ``os.cpu_count()``); the results do not depend on it.
        A program with states (``stateful``: buffers the model updates in forward) keeps them
        across calls and runs a batch as a sequence, in order, on one session; ``reset_state()``
        gives them their initial values again."""
        if threads is None:
            threads = os.cpu_count() or 1
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise InputError(f"threads must be a whole number of at least 1, got {threads!r}")
        arrays, batch, _ = self._batched_inputs(inputs)
        try:  # the runtime refuses non-finite float inputs, as on a board
            return list(self._host.run([np.ascontiguousarray(a) for a in arrays], batch, threads))
        except _core.RunError as e:
            raise run_failure(*_run_error(e)) from None

    @property
    def stateful(self) -> bool:
        """Whether the program keeps states between runs (buffers the model updates)."""
        return self._host.stateful

    def reset_state(self) -> None:
        """The states back to their initial values (the buffers' values at export)."""
        self._host.reset_state()

    def trace(self, inputs) -> dict[int, np.ndarray]:
        """Every model tensor of one sample, as float32 in PyTorch layout (int8 and int16 tensors
        dequantized), keyed by the compiler's tensor id: programs compiled from the same
        exported model share ids, so an int8 and an fp32 trace can be compared layer by layer."""
        arrays, batch, _ = self._batched_inputs(inputs)
        if batch != 1:
            raise InputError("trace takes one sample (batch size 1)")
        result = {}
        try:
            traced = self._host.trace([np.ascontiguousarray(a) for a in arrays])
        except _core.RunError as e:
            raise run_failure(*_run_error(e)) from None
        for ir, t in traced.items():
            data = t["data"]
            if data.dtype in (np.int8, np.int16):
                data = (data.astype(np.float32) - t["zero_point"]) * np.float32(t["scale"])
            result[ir] = data
        return result

    def tensor_names(self) -> dict[int, str]:
        """Compiler tensor id → tensor name (the ops that produced it, as in inspect)."""
        return {t["ir"]: t["name"] for t in self.metadata.get("tensors", []) if t.get("ir", -1) >= 0}

    # --- description ---

    def describe(self) -> dict:
        """Everything ``mcuflow inspect --json`` prints."""
        return {**self._layout(), "warnings": self.warnings()}

    def _layout(self) -> dict:
        """describe() but its warnings (which read it)."""
        tensors = self._host.tensors
        meta_tensors = self.metadata.get("tensors", [])
        for t, m in zip(tensors, meta_tensors):
            t.update(name=m["name"], shape=m["shape"])
            if "first_op" in m:
                t.update(first_op=m["first_op"], last_op=m["last_op"], alias_of=m["alias_of"],
                         in_place_of=m.get("in_place_of", -1))
        ops = []
        for i, (op, m) in enumerate(zip(self._host.ops, self.metadata.get("ops", []))):
            ops.append(dict(index=i, **m, inputs=op["inputs"], outputs=op["outputs"]))
        header = self.header
        return {
            "target": self.metadata.get("target"),
            "tier": self.metadata.get("tier"),
            "precision": self.precision,
            "program_bytes": header["file_bytes"],
            "constant_bytes": header["constants_bytes"],
            "arena_bytes": header["arena_bytes"],
            "arena_lower_bound": header["arena_lower_bound"],
            "region_bytes": self.region_bytes,
            "plan": self.metadata.get("plan", {}),
            "schedule": self.metadata.get("schedule", {}),
            "quantization": self.metadata.get("quantization", {}),
            "inputs": [_io_json(x) for x in self.inputs],
            "outputs": [_io_json(x) for x in self.outputs],
            "ops": ops,
            "tensors": tensors,
        }

    def summary(self) -> str:
        d = self.describe()
        tensors = d["tensors"]
        lines = [f"mcuflow program: {d['precision']} for {d['target']} ({d['tier']} tier), "
                 f"{d['program_bytes']} bytes ({d['constant_bytes']} of constants)",
                 f"arena {d['arena_bytes']} bytes (liveness lower bound {d['arena_lower_bound']})",
                 f"{'#':>3}  {'op':<20} {'kernel':<18} {'output':<18} {'MACs':>9}  source"]
        total_macs = 0
        for op in d["ops"]:
            out = tensors[op["outputs"][0]]
            shape = "x".join(str(v) for v in out["shape"])
            total_macs += op["macs"]
            lines.append(f"{op['index']:>3}  {op['kind']:<20} {op['kernel']:<18} {shape:<18} {op['macs']:>9}  "
                         f"{op['source']}")
        lines.append(f"total MACs: {total_macs}")
        lines += _quantization_lines(d["quantization"])
        lines += [f"WARNING: {w}" for w in self.warnings()]
        fallbacks = self.fallbacks()
        if fallbacks:
            lines.append(f"float fallbacks: {len(fallbacks)} model op(s) run on float32 kernels between a dequantize "
                         f"and a quantize")
            for f in fallbacks:
                lines.append(f"  op {f['index']} {f['kind']} ({f['kernel']}) at {f['source']}: {f['reason']}")
        # Compiled with weights="int4": how many weighted ops read int4 weights, and which keep int8 and why.
        noted = [op for op in d["ops"] if op.get("weights")]
        if noted:
            kept = [op for op in noted if op["weights"] != "int4"]
            lines.append(f"int4 weights: {len(noted) - len(kept)} op(s); int8 weights kept: {len(kept)}")
            for op in kept:
                lines.append(f"  op {op['index']} {op['kind']} ({op['kernel']}) at {op['source']}: {op['weights']}")
        # Compiled with precision or weights "mixed": each layer's choice and the measurement behind it.
        layered = [op for op in d["ops"] if op.get("precision")]
        if layered:
            measured = self.metadata.get("source", {}).get("mixed_precision")
            lines.append("layer precisions" + (f" (chosen program: {measured})" if measured else "") + ":")
            for op in layered:
                lines.append(f"  op {op['index']} {op['kind']} {tensors[op['outputs'][0]]['name']} ({op['kernel']}): "
                             f"{op['precision']}")
        return "\n".join(lines)

    def warnings(self) -> list[str]:
        """Why this program may be of no use, one line each (``mcuflow compile`` prints them,
        ``summary()`` and ``mcuflow inspect`` show them): calibration ranges that fit no real input
        (the compiler's, docs/quantization.md), a memory plan larger than the board regions it
        was planned into, a program larger than the code memory of every board with the target's
        core."""
        found = list(self.metadata.get("quantization", {}).get("warnings", []))
        for r in self.metadata.get("plan", {}).get("regions", []):
            if "capacity" in r and r["bytes"] > r["capacity"]:
                found.append(f"memory plan: region {r['name']} needs {r['bytes']} bytes, the board leaves "
                             f"{r['capacity']} for the plan: the program cannot run there")
        too_small = self._boards_too_small()
        if too_small:
            found.append(too_small)
        return found

    def _boards_too_small(self) -> str | None:
        from .boards import BOARDS, KiB
        from .memory_map import CODE_RESERVE, program_region

        target = self.metadata.get("target")
        boards = [b for b in BOARDS.values() if b.core == target]
        size = len(self.device_image)

        def fits(board) -> bool:
            try:
                region = program_region(self, board)
            except DeviceError:  # planned for regions this board lacks
                return False
            return region.name != board.code_region or size + CODE_RESERVE <= region.size

        if not boards or any(fits(b) for b in boards):
            return None
        codes = ", ".join(f"{b.name} {b.region(b.code_region).size // KiB} KiB" for b in boards)
        over = size + CODE_RESERVE - max(b.region(b.code_region).size for b in boards)
        return (f"program: {size} bytes (without metadata) fit no {target} board's code memory ({codes}, "
                f"{CODE_RESERVE // KiB} KiB of it kept for runtime and kernels)\n  " + flash_advice(self._layout(), over))

    def fallbacks(self) -> list[dict]:
        """The model ops of an int8 program that run on a float32 kernel, in execution order:
        ``index`` (program op), ``kind``, ``kernel``, ``source`` and ``reason``. The dequantize,
        quantize and layout ops around each carry the same reason but are not listed."""
        around = ("dequantize_s8_f32", "quantize_f32_s8", "permute_b32")  # or their tier kernels
        return [{"index": i, "kind": op["kind"], "kernel": op["kernel"], "source": op["source"],
                 "reason": op["fallback"]}
                for i, op in enumerate(self.metadata.get("ops", []))
                if op.get("fallback") and not op["kernel"].startswith(around)]

    def memory_plan(self) -> str:
        """The memory plan as text (``mcuflow inspect``): arena and lower bound, how the op order
        and the placement were chosen, which ops run in place, every byte above the bound, and
        each arena tensor's bytes."""
        d = self.describe()
        plan, schedule, tensors = d["plan"], d["schedule"], d["tensors"]
        arena, bound = plan.get("arena", d["arena_bytes"]), d["arena_lower_bound"]
        lines = [f"memory plan: {arena} bytes of activations, liveness lower bound {bound}"
                 + (f" (ratio {arena / bound:.3f})" if bound else "")]
        if plan:
            lines.append(f"  without in-place execution the lower bound would be {plan['lower_bound_without_in_place']}, "
                         f"with every in-place op the kernels allow {plan['lower_bound_all_in_place']} (the plan keeps "
                         f"the ones that shrink the arena)")
            peak = ", ".join(plan["peak_tensors"])
            lines.append(f"  peak at op {plan['peak_op']}: {peak} ({plan['alignment_padding']} bytes of it 16-byte "
                         f"alignment padding)")
            proof = "proven optimal" if plan["optimal"] else "not proven optimal"
            lines.append(f"  placement: {plan['method']}, {proof} ({plan['search_nodes']} search nodes)")
        if schedule:
            how = (f"reordered, peak {schedule['exported_peak']} -> {schedule['peak']}" if schedule["reordered"]
                   else f"exported order kept (peak {schedule['peak']}, no better order)")
            lines.append(f"  op order: {how}; {schedule['method']} search over {schedule['states']} op sets")
        if len(d["region_bytes"]) > 1 or plan.get("copied_weights"):
            for r in plan.get("regions", []):
                room = f" of {r['capacity']}" if "capacity" in r else ""
                lines.append(f"  region {r['name']}{' (fast)' if r['fast'] else ''}: {r['bytes']}{room} bytes, "
                             f"{r['activations']} of them activations")
        for s in plan.get("spilled", []):
            lines.append(f"  spilled to {s['to']}: {s['tensor']} ({s['accesses_per_byte']:.3g} accesses per byte, "
                         f"the coldest live at the fuller region's peak)")
        for c in plan.get("copied_weights", []):
            lines.append(f"  weights copied to {c['region']} at start-up: {c['tensor']} ({c['bytes']} bytes, "
                         f"{c['macs_per_byte']:.3g} MACs per byte)")
        for step in plan.get("in_place", []):
            shift = step["shift"]
            where = "over" if shift == 0 else f"{shift} bytes below" if shift > 0 else f"{-shift} bytes above"
            lines.append(f"  in place: op {step['op']} writes {step['output']} {where} {step['input']}")
        for t in tensors:
            if t["storage"] == "streamed":
                lines.append(f"  streamed input: {t['name']} ({t['bytes']} bytes) is fetched in row bands while the "
                             "program runs (read_input_rows): no arena bytes")
        if plan.get("excess"):
            lines.append("  above the lower bound:")
            lines += [f"    {line}" for line in plan["excess"]]
        names = [r["name"] for r in plan.get("regions", [])] or ["arena"]
        lines.append(f"{'tensor':<36} {'dtype':<8} {'region':<8} {'offset':>8} {'bytes':>8}  live ops")
        for t in tensors:
            if t["storage"] in ("constant", "streamed") or (t.get("alias_of", -1) >= 0 and t.get("in_place_of", -1) < 0):
                continue
            note = f"  in place over {tensors[t['in_place_of']]['name']}" if t.get("in_place_of", -1) >= 0 else ""
            offset, live = (t["copy_offset"], "weights") if t["storage"] == "copied" else \
                (t["offset"], f"{t.get('first_op')}..{t.get('last_op')}")
            lines.append(f"{t['name'][:36]:<36} {t['dtype']:<8} {names[t['region']][:8]:<8} {offset:>8} {t['bytes']:>8}  "
                         f"{live}{note}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<mcuflow.Program {self.precision} {len(self.data)} bytes, arena {self.arena_bytes}>"


def _run_error(e: Exception) -> tuple[str, int]:
    """_core.RunError's (runtime error name, failing sample)."""
    name, sample = str(e).split()
    return name, int(sample)


def _quantization_lines(quantization: dict) -> list[str]:
    """The range observer of an int8 program and the activation ranges it narrowed."""
    if not quantization:
        return []
    observer = quantization["observer"]
    if observer == "given":
        return ["activation ranges: as given by the model's quantize / dequantize nodes (no calibration)"]
    if observer == "percentile":
        observer += f" {quantization['percentile']:g}"
    narrowed = quantization.get("narrowed")
    corrected = quantization.get("bias_corrected")
    bias_lines = [] if corrected is None else [
        f"bias correction: {len(corrected)} layer(s)" + (f" ({', '.join(corrected)})" if corrected else "")]
    if narrowed is None:
        return [f"activation ranges: {observer} (as observed on the calibration data)"] + bias_lines
    bins = f" ({quantization['bins']}-bin histograms)" if "bins" in quantization else ""
    lines = [f"activation ranges: {observer} observer{bins}, {len(narrowed)} narrowed below the observed min/max"]
    for n in narrowed:
        (lo, hi), (clip_lo, clip_hi) = n["observed"], n["range"]
        lines.append(f"  {n['tensor']}: [{lo:.4g}, {hi:.4g}] -> [{clip_lo:.4g}, {clip_hi:.4g}]")
    return lines + bias_lines


def _io_json(spec: dict) -> dict:
    return {k: (str(np.dtype(v)) if k == "dtype" else v) for k, v in spec.items()}


def calibration_bar_wanted(progress: bool | None, samples: int) -> bool:
    """compile's ``progress`` option: None asks for a bar only where a person watches a long run."""
    if progress is None:
        return samples >= PROGRESS_MIN_SAMPLES and sys.stderr.isatty()
    return bool(progress) and samples > 0


def compile(exported_program, target: str = "cortex-m55", calibration: Any = None, *,
            precision: str = "int8", io: str = "float32", source: dict[str, str] | None = None,
            observer: str | None = None, percentile: float | None = None, bias_correction: bool | None = None,
            fallback: str = "float", schedule: bool = True, in_place: bool = True, memory: Any = None,
            patches: int = 1, stream_input: bool = False, progress: bool | None = None,
            weights: str = "int8", min_snr_db: float | None = None, min_agreement: float | None = None,
            max_arena_bytes: int | None = None, max_flash_bytes: int | None = None) -> Program:
    """Compiles a ``torch.export.ExportedProgram`` into an mcuflow ``Program``.

    ``calibration``: representative inputs (an iterable of input tuples, or one array per
    input with a leading batch dimension); required for ``precision="int8"`` and ``"int16"`` unless the graph
    carries its own quantization (quantize / dequantize nodes from ``convert_pt2e``, e.g. with
    ``mcuflow.quantizer.MCUFlowQuantizer``): its scales and zero points are used as given.
    ``precision="int16"``: symmetric int16 activations with int8 per-channel weights and int64
    biases (TFLite's 16x8 scheme) for the ops that have int16 kernels (convolutions, depthwise,
    linear, add, mul, average and max pooling, views and copies), int8 elsewhere, with a
    requantization where the two meet (docs/quantization.md "int16 activations").
    ``weights="int4"`` (int8 precision only, W4A8): convolutions, depthwise convolutions and linear
    layers get symmetric int4 weights per output channel ([-7, 7]), packed two a byte, on the
    int4-weight kernels; a weighted op none of them takes (a transposed or streaming convolution)
    keeps int8 weights, and ``mcuflow inspect`` says which and why (docs/quantization.md "int4 weights").
    ``precision="mixed"`` and/or ``weights="mixed"``: each layer (a convolution, linear, add or mul)
    gets its own choice of A8W4 (int8 activations, int4 weights; with weights "mixed"), A8W8 and
    A16W8 (int16 activations; with precision "mixed"): the cheapest that meet the budgets, found by
    a sensitivity pass on the host runtime over the calibration samples (``mcuflow.mixed``;
    docs/quantization.md "Mixed precision"). Budgets: ``min_snr_db`` (output SNR against the float
    program) and/or ``min_agreement`` (its top-1 agreement with the float program, 0 to 1), one of
    them required; ``max_arena_bytes`` (the planned arena) and ``max_flash_bytes`` (the device
    image). ``mcuflow inspect`` shows each layer's choice and the measurement behind it; a budget no
    choice meets raises ``BudgetError`` naming the layers and the shortfall.
    ``io="int8"`` keeps the program's inputs and outputs int8 (int8 precision only).
    ``observer``: how int8 calibration picks each activation's range (docs/quantization.md):
    ``"mse"`` (the default for int8) the range with the least squared quantization error on the
    values; ``"minmax"`` the observed range (the only one int16 and fp32 programs take);
    ``"percentile"`` each side clipped at the ``percentile``-th percentile of the values (default
    99.99, above 50 and at most 100; robust to a few glitches in the calibration data); ``"entropy"``
    the range, shrunk towards zero from the observed one, whose int8 histogram has the least KL
    divergence from the clipped values' histogram. Recorded in the program's metadata
    ("quantization", with every narrowed range) and shown by ``Program.summary()``.
    ``bias_correction``: each convolution's and linear layer's bias absorbs the mean shift its
    weights' rounding causes, measured on the calibration data (docs/quantization.md "Bias
    correction"): True for every such layer, False for none, None (the default) for those with int4
    weights; weights with a given quantization are left as they are.
    ``fallback``: what an int8 program does with an op that has no usable int8 kernel:
    ``"float"`` runs it on its float32 kernel between a dequantize and a quantize (listed by
    ``Program.summary()`` and ``mcuflow inspect`` with the reason), ``"error"`` refuses it.
    ``schedule``: run the ops in the order with the smallest memory peak (False: the exported
    order). ``in_place``: let ops overwrite inputs that die there (False: every output gets
    bytes of its own). Neither changes a single output bit; ``mcuflow inspect`` shows the plan.
    ``memory``: where activations (and weights worth copying) go: a board name such as
    ``"qemu-m55"`` (its RAM regions, fastest first, from ``mcuflow.boards``), a memory-map JSON
    file or dict (``mcuflow.memory_map.memory_regions``); None: one arena.
    ``patches``: run the convolutions from the first input on (up to the stage end with the
    lowest estimated peak) in this many horizontal bands, so their large feature maps never
    exist whole (docs/memory_planning.md); bit-exact, at the cost of recomputed halo rows. The
    bands are kept only when they plan a smaller arena.
    ``stream_input`` (with ``patches``): the bands may also fetch their input rows (halo
    included) from the application while the program runs, so the first input never exists
    whole in the program's memory — on a device through a ``mcuflow::InputReader`` passed to
    ``Session::run`` (e.g. camera lines); ``Program.run`` and the board harness read the rows from
    the given arrays. Kept when it plans the smallest memory; such an input shows
    ``"streamed": True`` in ``Program.inputs``.
    ``source``: provenance strings stored in the program's metadata under "source" (``mcuflow
    compile`` records the model file's name and SHA-256 there).
    ``progress``: a bar on stderr while calibration runs the samples (True), none (False), or
    (None) a bar when stderr is a terminal and there are at least 500 samples.
    A program that compiles may still be of no use (degenerate calibration, a plan or program
    too large for the board): ``Program.warnings()`` says why; ``mcuflow compile`` prints it.
    """
    from .calibration import normalize_calibration
    from .memory_map import weights_leave_fast_memory
    from .frontend import describe, user_inputs

    options = CompileOptions(target=target, precision=precision, weights=weights, io=io, observer=observer,
                             percentile=percentile, bias_correction=bias_correction,
                             fallback=fallback, schedule=schedule, in_place=in_place, memory=memory, patches=patches,
                             stream_input=stream_input, min_snr_db=min_snr_db, min_agreement=min_agreement,
                             max_arena_bytes=max_arena_bytes, max_flash_bytes=max_flash_bytes)
    if source is not None and not (isinstance(source, dict)
                                   and all(isinstance(k, str) and isinstance(v, str) for k, v in source.items())):
        raise InputError("source maps strings to strings")
    builder = _core.GraphBuilder()
    try:
        description = describe(exported_program, builder)
        samples: list = []
        mixed = "mixed" in (options.precision, options.weights)
        if mixed and description.quantized_tensors:
            raise InputError("the model brings its own (int8) quantization; 'mixed' chooses precisions by calibration")
        if options.precision in ("int8", "int16", "mixed") and (calibration is not None or not description.quantized_tensors):
            if calibration is None:
                raise InputError(f"{options.precision} compilation needs calibration data (calibration=...) or a "
                                 "quantized graph (convert_pt2e)")
            samples = normalize_calibration(calibration, user_inputs(exported_program), description.integer_inputs)
            source = {**(source or {}), CALIBRATION_SAMPLES_KEY: " ".join(sample_hash(s) for s in samples)}
        show_bar = calibration_bar_wanted(progress, len(samples))

        def compile_as(copy, precision=options.precision, weights=options.weights, layers=(), provenance=None):
            o = options
            bar = CountingBar("calibration", "compile") if show_bar else None
            try:
                return Program(_core.compile(builder, o.target, [list(s) for s in samples], precision, o.io,
                                             {**(source or {}), **(provenance or {})}, o.fallback, bool(o.schedule),
                                             bool(o.in_place), o.regions, copy, o.patches, o.stream_input,
                                             observer="minmax" if precision == "fp32" else o.observer,
                                             percentile=o.percentile, progress=bar,
                                             weights=weights, layers=list(layers),
                                             bias_correction={None: "int4", True: "all", False: "off"}[o.bias_correction]))
            finally:
                if bar is not None:
                    bar.close()

        if mixed:  # every layer named: the program-wide options are their lowest rung, int8
            from . import mixed as mixed_precision

            def compile_layers(layers, summary=None, copy=options.copy_weights):
                provenance = None if summary is None else {"mixed_precision": summary}
                return compile_as(copy, "int8", "int8", layers, provenance)

            show_bar = False  # the pass compiles many times: no bar per compile
            budgets = mixed_precision.Budgets(options.min_snr_db, options.min_agreement, options.max_arena_bytes,
                                              options.max_flash_bytes)
            layers, summary = mixed_precision.choose(_core.precision_layers(builder), options.precision,
                                                     options.weights, budgets, compile_layers,
                                                     compile_as(options.copy_weights, "fp32", "int8"), samples)

            def compile_with(copy):
                return compile_layers(layers, summary, copy)
        else:
            compile_with = compile_as
        program = compile_with(options.copy_weights)
        if not options.copy_weights and weights_leave_fast_memory(program, memory, options.regions):
            program = compile_with(True)
    except _core.CompileError as e:
        raise UnsupportedModelError(str(e)) from None
    return program
