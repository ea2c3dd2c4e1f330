"""The `mcuflow` command line.

Every failure the user can cause ends with one line on stderr and exit code 1; nothing the user
had is overwritten unless the command succeeded.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import zipfile
from pathlib import Path

import numpy as np

from .errors import InputError, McuflowError
from .outputs import check_output_parent, refuse_overwriting_inputs, write_file

EXIT_USER_ERROR = 1
EXIT_INTERNAL_ERROR = 2


def load_arrays(path: str, what: str) -> np.ndarray | dict[str, np.ndarray]:
    """The array of an .npy file, or the arrays of an .npz file by name (one per input: matched
    to the model's input names, api.arrays_by_input_name)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{what} file {path} does not exist")
    try:
        if p.suffix == ".npz":
            with np.load(p, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
            if not arrays:
                raise InputError(f"{what} file {path} holds no arrays")
            return arrays
        return np.load(p, allow_pickle=False)
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as e:
        raise InputError(f"cannot read {what} file {path}: {e}") from None


def load_array(path: str, what: str) -> np.ndarray:
    """The one array of an .npy file (or of an .npz file holding one)."""
    arrays = load_arrays(path, what)
    if isinstance(arrays, dict):
        if len(arrays) != 1:
            raise InputError(f"{what} file {path} holds {len(arrays)} arrays ({', '.join(arrays)}); give one")
        (arrays,) = arrays.values()
    return arrays


def save_arrays(path: str, arrays: list[np.ndarray]) -> None:
    """Writes an .npz with output_0, output_1, … atomically."""
    write_file(path, lambda f: np.savez(f, **{f"output_{i}": a for i, a in enumerate(arrays)}))


def load_exported(path: str):
    import logging

    import torch

    if not Path(path).is_file():
        raise InputError(f"model file {path} does not exist")
    # torch logs a traceback as a warning before raising; the one-line error below says it all.
    logging.getLogger("torch.export").setLevel(logging.CRITICAL)
    try:
        return torch.export.load(path)
    except Exception as e:  # torch raises many types for a file that is not a .pt2 archive
        raise InputError(f"cannot load {path} as a torch.export program (.pt2 written by torch.export.save): "
                         f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None


def file_sha256(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def percentile_option(text: str | None) -> float | None:
    """--percentile as a number (argparse's own type errors would print usage and exit 2)."""
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        raise InputError(f"--percentile takes a number above 50 and at most 100, got '{text}'") from None


def cmd_compile(args) -> int:
    from .api import check_compile_options, compile as compile_model

    # Every mistake in the arguments is found here, before torch is imported and the model loaded.
    if not Path(args.model).is_file():
        raise InputError(f"model file {args.model} does not exist")
    calibration = None
    if args.precision == "int8":
        if not args.calibration:
            raise InputError("--calibration CALIB.npz is required for int8 (or pass --precision fp32)")
        calibration = load_arrays(args.calibration, "calibration")
    check_output_parent(args.output)
    refuse_overwriting_inputs(args.output, {"the model": args.model, "the calibration data": args.calibration})
    options = dict(target=args.target, precision=args.precision, io=args.io, observer=args.observer,
                   percentile=percentile_option(args.percentile), memory=args.memory, patches=args.patches,
                   stream_input=args.stream_input, fallback="error" if args.no_fallback else "float")
    check_compile_options(**options)
    ep = load_exported(args.model)
    # Provenance for measurement records (mcuflow size / bench): which files made this program.
    source = {"model_file": Path(args.model).name, "model_sha256": file_sha256(args.model)}
    if calibration is not None:
        source["calibration_sha256"] = file_sha256(args.calibration)
    program = compile_model(ep, calibration=calibration, source=source, **options)
    program.save(args.output)
    for warning in program.warnings():
        print(f"mcuflow compile: WARNING: {warning}", file=sys.stderr)
    print(f"wrote {args.output}: {len(program.data)} bytes, arena {program.arena_bytes} bytes "
          f"(lower bound {program.arena_lower_bound})")
    return 0


def cmd_inspect(args) -> int:
    from .api import Program

    program = Program.load(args.program)
    if args.json:
        print(json.dumps(program.describe(), indent=1, default=str))
        return 0
    print(program.summary())
    d = program.describe()
    print("\n" + program.memory_plan())
    print("\nops (kernel choice):")
    for op in d["ops"]:
        ins = ", ".join(_tensor_str(d["tensors"][i]) for i in op["inputs"])
        outs = ", ".join(_tensor_str(d["tensors"][i]) for i in op["outputs"])
        print(f"{op['index']:>3} {op['kernel']}: {ins} -> {outs}\n      why: {op['reason']}")
    return 0


def _tensor_str(t: dict) -> str:
    q = f" q(s={t['scale']:.4g},zp={t['zero_point']})" if t["dtype"] == "int8" and t["scale"] else ""
    return f"{t['name']}{list(t['dims'])}:{t['dtype']}{q}"


def cmd_run(args) -> int:
    from .api import Program

    program = Program.load(args.program)
    inputs = load_arrays(args.input, "input")
    check_output_parent(args.output)
    refuse_overwriting_inputs(args.output, {"the program": args.program, "the input": args.input})
    if args.board == "host":
        outputs = program.run(inputs)
    else:
        from .device import run_on_board

        outputs = run_on_board(program, inputs, args.board, timeout=args.timeout)
    save_arrays(args.output, outputs)
    print(f"wrote {args.output}: " + ", ".join(f"{list(o.shape)} {o.dtype}" for o in outputs))
    return 0


class _Parser(argparse.ArgumentParser):
    """A command-line mistake is a user error like any other: one line, exit code 1."""

    def error(self, message: str):
        raise InputError(f"{message} (see {self.prog} --help)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mcuflow", description="PyTorch models on Arm Cortex-M microcontrollers")
    sub = parser.add_subparsers(dest="command", required=True)

    c = sub.add_parser("compile", help="compile a torch.export .pt2 model into an .mfp program")
    c.add_argument("model", help="MODEL.pt2 written by torch.export.save")
    c.add_argument("--target", default="cortex-m55", help="cortex-m0 … cortex-m85 (default cortex-m55)")
    c.add_argument("--calibration",
                   help="CALIB.npz: one array per model input, named as the input, leading batch dimension")
    c.add_argument("--precision", choices=["int8", "fp32"], default="int8")
    c.add_argument("--io", choices=["float32", "int8"], default="float32", help="program input/output dtype")
    c.add_argument("--observer", default="minmax",
                   help="int8 activation ranges: minmax (default, as observed), percentile (each side clipped at "
                        "--percentile) or mse (least squared quantization error); docs/quantization.md")
    c.add_argument("--percentile", help="with --observer percentile: the percentile kept on each side "
                                        "(above 50, at most 100; default 99.99)")
    c.add_argument("--no-fallback", action="store_true",
                   help="int8: fail instead of running ops without a usable int8 kernel in float32")
    c.add_argument("--memory", help="plan into a board's memory regions (e.g. qemu-m55: DTCM first, then SRAM) "
                                   "or a memory-map JSON file; default one arena")
    c.add_argument("--patches", type=int, default=1,
                   help="run the early convolutions in N horizontal bands to lower the memory peak (default 1)")
    c.add_argument("--stream-input", action="store_true",
                   help="with --patches: the bands fetch their input rows from the application while the program "
                        "runs (Session::run's InputReader), so the whole input never sits in RAM")
    c.add_argument("-o", "--output", required=True, help="output .mfp file")
    c.set_defaults(func=cmd_compile)

    i = sub.add_parser("inspect", help="show ops, kernels, quantization and the memory plan of a program")
    i.add_argument("program")
    i.add_argument("--json", action="store_true")
    i.set_defaults(func=cmd_inspect)

    r = sub.add_parser("run", help="run a program on the host runtime or an emulated board")
    r.add_argument("program")
    r.add_argument("--input", required=True,
                   help="X.npy or X.npz (one array per input, named as the input; batch dimension first)")
    r.add_argument("-o", "--output", required=True, help="Y.npz")
    r.add_argument("--board", default="host", help="host (default) or an emulated board such as qemu-m55")
    r.add_argument("--timeout", type=float, default=120.0, help="seconds before a hung board run is killed")
    r.set_defaults(func=cmd_run)

    from . import device, measure, zoo

    device.add_commands(sub)
    measure.add_commands(sub)  # size, bench
    zoo.add_commands(sub)
    from .validate import add_commands as add_validate_command  # `from . import validate` is the function

    add_validate_command(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except McuflowError as e:
        print(f"mcuflow: error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("mcuflow: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head`: stop quietly, like other Unix tools
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as e:  # a bug in mcuflow: still one line, with a way to see more
        if os.environ.get("MCUFLOW_DEBUG"):
            raise
        first_line = (str(e).splitlines() or [""])[0][:300]
        print(f"mcuflow: internal error: {type(e).__name__}: {first_line} (set MCUFLOW_DEBUG=1 for a traceback)",
              file=sys.stderr)
        return EXIT_INTERNAL_ERROR


if __name__ == "__main__":
    sys.exit(main())
