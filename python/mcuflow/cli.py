"""The `mcuflow` command line.

Every failure the user can cause ends with one line on stderr and exit code 1; nothing the user
had is overwritten unless the command succeeded.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from pathlib import Path

import numpy as np

from .errors import InputError, McuflowError
from .inputs import file_sha256, load_array, load_arrays, load_exported
from .outputs import check_output_parent, refuse_overwriting_inputs, write_file

EXIT_USER_ERROR = 1
EXIT_INTERNAL_ERROR = 2
EXIT_VALIDATION_FAILED = 3  # mcuflow validate: a comparison or budget failed


def save_arrays(path: str, arrays: list[np.ndarray]) -> None:
    """Writes an .npz with output_0, output_1, … atomically."""
    write_file(path, lambda f: np.savez(f, **{f"output_{i}": a for i, a in enumerate(arrays)}))


def number(text: str, flag: str, what: str = "a number") -> float:
    """A flag's number (argparse's own type errors would print usage and exit 2)."""
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{flag} takes {what}, got '{text}'") from None


def percentile_option(text: str | None) -> float | None:
    return None if text is None else number(text, "--percentile", "a number above 50 and at most 100")


def byte_count(text: str, flag: str) -> int:
    try:
        return int(text.replace("_", ""))
    except ValueError:
        raise InputError(f"{flag} takes a whole number of bytes, got '{text}'") from None


def cmd_compile(args) -> int:
    from .api import compile as compile_model
    from .options import CompileOptions

    # Every mistake in the arguments is found here, before torch is imported and the model loaded.
    if not Path(args.model).is_file():
        raise InputError(f"model file {args.model} does not exist")
    calibration = None
    if args.precision in ("int8", "int16", "mixed") or args.weights == "mixed":
        if not args.calibration:
            raise InputError(f"--calibration CALIB.npz is required for {args.precision} (or pass --precision fp32)")
        calibration = load_arrays(args.calibration, "calibration")
    check_output_parent(args.output)
    refuse_overwriting_inputs(args.output, {"the model": args.model, "the calibration data": args.calibration})
    options = dict(target=args.target, precision=args.precision, weights=args.weights, io=args.io,
                   observer=args.observer, bias_correction={"int4": None, "all": True, "off": False}[args.bias_correction],
                   percentile=percentile_option(args.percentile), memory=args.memory, patches=args.patches,
                   stream_input=args.stream_input, fallback="error" if args.no_fallback else "float",
                   min_snr_db=args.min_snr_db, min_agreement=args.min_agreement,
                   max_arena_bytes=args.max_arena_bytes, max_flash_bytes=args.max_flash_bytes)
    CompileOptions(**options)
    options["progress"] = args.progress or None
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
        if op.get("weights"):
            print(f"      weights: {op['weights']}")
        if op.get("precision"):
            print(f"      precision: {op['precision']}")
    return 0


def _tensor_str(t: dict) -> str:
    q = f" q(s={t['scale']:.4g},zp={t['zero_point']})" if t["dtype"] in ("int8", "int16") and t["scale"] else ""
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


def cmd_firmware(args) -> int:
    from .api import Program
    from .device import build

    program = Program.load(args.program)
    fw = build(program, args.board, args.output)
    info = fw.info or {}
    uf2 = ", firmware.uf2" if (fw.out_dir / "firmware.uf2").is_file() else ""
    print(f"wrote {fw.elf}, {fw.map.name}, {fw.bin.name}{uf2} and generated sources in {Path(args.output) / 'generated'}")
    if info:
        print(f"compiler: {info.get('compiler', '?')}; flags recorded in {fw.build_info}")
    return 0


def cmd_size(args) -> int:
    from .measure import format_report, size_report

    report = size_report(args.elf, args.map, args.board, run=not args.no_run, timeout=args.timeout)
    print(json.dumps(report, indent=1) if args.json else format_report(report))
    return 0


def check_html_output(path: str | None, inputs: dict) -> None:
    """--html: its directory exists and it is none of the command's inputs (checked before any work)."""
    if path is not None:
        check_output_parent(path, "--html")
        refuse_overwriting_inputs(path, inputs, "--html")


def cmd_bench(args) -> int:
    from .api import Program
    from .bench import format_report, progress_line, run_bench

    check_html_output(args.html, {"the program": args.program, "the input": args.input})
    program = Program.load(args.program)
    inputs = load_arrays(args.input, "input") if args.input else None
    report = run_bench(program, args.board, warmup=args.warmup, runs=args.runs, inputs=inputs, timeout=args.timeout,
                       progress=progress_line)
    if args.html:
        from .html_report import bench_page

        write_file(args.html, bench_page(report, program, Path(args.program).name))
        print(f"mcuflow bench: wrote {args.html}", file=sys.stderr)
    print(json.dumps(report, indent=1) if args.json else format_report(report, args.program))
    return 0


def cmd_zoo_export(args) -> int:
    import torch

    from .frontend import user_inputs
    from .zoo import get

    if args.samples < 1:
        raise InputError(f"--samples must be at least 1, got {args.samples}")
    output = Path(args.output)
    calibration_path = Path(args.calibration or output.with_name(output.stem + "_calibration.npz"))
    if calibration_path.suffix != ".npz":
        raise InputError(f"--calibration {calibration_path} must end in .npz")
    for path in (output, calibration_path):
        if not path.parent.is_dir():
            raise InputError(f"output directory {path.parent} does not exist")
    model = get(args.name, seed=args.seed, checkpoint=args.checkpoint)
    ep = model.export()
    input_name = user_inputs(ep)[0][0]
    data = model.calibration(args.samples)
    write_file(output, lambda f: torch.export.save(ep, f))
    write_file(calibration_path, lambda f: np.savez(f, **{input_name: data}))
    source = f"checkpoint {args.checkpoint}" if args.checkpoint else f"seed {args.seed} random weights"
    print(f"wrote {output} ({model.name}, {source}) and {calibration_path} ({args.samples} calibration samples, "
          f"input '{input_name}' {list(data.shape)})")
    return 0


def cmd_zoo_list(args) -> int:
    from .zoo import names, spec

    print(f"{'model':<20} {'input':<16} {'parameters':>11} {'MACs':>11}  task")
    for name in names():
        s = spec(name)
        params = f"{s.reference_parameters:,}" if s.reference_parameters else "-"
        macs = f"{s.reference_macs:,}" if s.reference_macs else "-"
        print(f"{name:<20} {'x'.join(map(str, s.input_shape)):<16} {params:>11} {macs:>11}  {s.task}")
    return 0


def cmd_boards(args) -> int:
    from .boards import board_named, board_names, board_summary

    rows = [board_summary(board_named(b)) for b in (args.board_files or board_names())]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'board':<12} {'core':<11} {'tier':<6} {'console':<11} {'emulator':<14} memory (code, RAM; * arena default)")
    for r in rows:
        memory = ", ".join(f"{m['name']} 0x{m['base']:08X} {_kib(m['size'])} {m['kind']}"
                           + ("*" if m["name"] == r["arena_region"] else "") for m in r["regions"])
        print(f"{r['name']:<12} {r['core']:<11} {r['tier']:<6} {r['console']:<11} {r['emulator'] or 'none':<14} "
              f"{memory}")
    return 0


def _kib(size: int) -> str:
    return f"{size // 1024 ** 2} MiB" if size % 1024 ** 2 == 0 else f"{size / 1024:g} KiB"


def cmd_validate(args) -> int:
    from .api import Program
    from .validate import CalibrationReuseWarning, check_request, compare_records, validate

    if args.compare:
        if args.html:
            raise InputError("--html reports a validation run; --compare prints what changed between two records")
        print(compare_records(*args.compare))
        return 0
    missing = [flag for flag, value in (("--model", args.model), ("--program", args.program), ("--eval", args.eval),
                                        ("-o", args.output)) if not value]
    if missing:
        raise InputError(f"validate needs {', '.join(missing)} (or --compare OLD_RECORD NEW_RECORD)")
    program = Program.load(args.program)
    eval_inputs = load_arrays(args.eval, "evaluation")
    labels = load_array(args.labels, "labels") if args.labels else None
    if not Path(args.model).is_file():
        raise InputError(f"model file {args.model} does not exist")
    given = {"the model": args.model, "the program": args.program, "the evaluation data": args.eval,
             "the labels": args.labels, "the budgets": args.budgets}
    refuse_overwriting_inputs(args.output, given)
    check_html_output(args.html, given)
    check_request(program, eval_inputs, labels, args.board, args.budgets, args.output, args.worst)
    exported = load_exported(args.model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CalibrationReuseWarning)  # the report says it, loudly
        result = validate(None, exported, program, eval_inputs, labels, board=args.board, budgets=args.budgets,
                          record_dir=args.output, worst=args.worst, progress=args.progress or None,
                          timeout=args.timeout, model_path=args.model)
    for note in result.warnings:
        print(f"mcuflow validate: WARNING: {note}", file=sys.stderr)
    if args.html:
        from .html_report import validation_page

        write_file(args.html, validation_page(result, program, args.board))
        result.report += f"\nhtml report: {args.html}"
    print(result.report)
    return 0 if result.passed else EXIT_VALIDATION_FAILED


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
    c.add_argument("--precision", choices=["int8", "int16", "fp32", "mixed"], default="int8",
                   help="int8, int16 (int16 activations with int8 weights, A16W8, where an int16 kernel takes the "
                        "op), fp32, or mixed (each layer int8 or int16, the cheapest meeting the budgets)")
    c.add_argument("--weights", default="int8",
                   help="int4: packed int4 weights (W4A8, int8 precision) for conv, depthwise and linear layers; "
                        "inspect names the layers that keep int8 weights and why; mixed: each layer int4 or int8")
    c.add_argument("--min-snr-db", type=lambda t: number(t, "--min-snr-db"),
                   help="mixed: the least output SNR (dB) against the float program on the calibration data")
    c.add_argument("--min-agreement", type=lambda t: number(t, "--min-agreement"),
                   help="mixed: the least top-1 agreement with the float program on the calibration data (0 to 1)")
    c.add_argument("--max-arena-bytes", type=lambda t: byte_count(t, "--max-arena-bytes"), help="mixed: the arena budget (bytes)")
    c.add_argument("--max-flash-bytes", type=lambda t: byte_count(t, "--max-flash-bytes"),
                   help="mixed: the program's budget on the device (bytes, without metadata)")
    c.add_argument("--io", choices=["float32", "int8"], default="float32", help="program input/output dtype")
    c.add_argument("--observer",
                   help="int8 activation ranges: mse (default: least squared quantization error), minmax (as "
                        "observed), percentile (each side clipped at --percentile) or entropy (least KL divergence "
                        "of the quantized histogram); docs/quantization.md")
    c.add_argument("--percentile", help="with --observer percentile: the percentile kept on each side "
                                        "(above 50, at most 100; default 99.99)")
    c.add_argument("--bias-correction", choices=["off", "int4", "all"], default="int4",
                   help="which convolutions' and linear layers' biases absorb the mean shift of their weights' "
                        "rounding, measured on the calibration data: those with int4 weights (default), all or "
                        "none; docs/quantization.md")
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
    c.add_argument("--progress", action="store_true",
                   help="show calibration's progress bar even when stderr is not a terminal (or with < 500 samples)")
    c.set_defaults(func=cmd_compile)

    i = sub.add_parser("inspect", help="show ops, kernels, quantization and the memory plan of a program")
    i.add_argument("program")
    i.add_argument("--json", action="store_true")
    i.set_defaults(func=cmd_inspect)

    r = sub.add_parser("run", help="run a program on the host runtime or an emulated board")
    r.add_argument("program")
    r.add_argument("--input", required=True,
                   help="X.npy or X.npz (one array per input, named as the input; batch dimension first; "
                        "a program with states runs the batch as a sequence, in order)")
    r.add_argument("-o", "--output", required=True, help="Y.npz")
    r.add_argument("--board", default="host",
                   help="host (default), an emulated board such as qemu-m55, or a board file NAME.json")
    r.add_argument("--timeout", type=float, default=120.0, help="seconds before a hung board run is killed")
    r.set_defaults(func=cmd_run)

    from .boards import board_names
    from .validate import DEFAULT_BOARD_TIMEOUT_S

    f = sub.add_parser("firmware", help="build firmware that runs a program on a board")
    f.add_argument("program")
    f.add_argument("--board", required=True, help=", ".join(board_names()) + ", or a board file NAME.json")
    f.add_argument("-o", "--output", required=True,
                   help="output directory, replaced whole at the end (one holding other files is refused)")
    f.set_defaults(func=cmd_firmware)

    s = sub.add_parser("size", help="flash and RAM of a firmware ELF by component (runtime, kernels, program, ...)")
    s.add_argument("elf", help="firmware.elf (its linker map beside it, or --map)")
    s.add_argument("--map", help="linker map (default: the ELF's name with .map)")
    s.add_argument("--board", help="board, when no build_info.json lies beside the ELF")
    s.add_argument("--no-run", action="store_true", help="do not run the firmware to measure the stack")
    s.add_argument("--timeout", type=float, default=120.0, help="seconds before a hung stack run is killed")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_size)

    b = sub.add_parser("bench", help="latency of a program on an emulated board (instructions under QEMU)")
    b.add_argument("program")
    b.add_argument("--board", required=True, help=", ".join(board_names()) + ", or a board file NAME.json")
    b.add_argument("--warmup", type=int, default=2, help="unmeasured runs after the cold one (default 2)")
    b.add_argument("--runs", type=int, default=20, help="measured runs (default 20)")
    b.add_argument("--input", help="X.npy or X.npz: the first sample is benchmarked (default: seeded random)")
    b.add_argument("--timeout", type=float, default=300.0, help="seconds before a hung run is killed")
    b.add_argument("--json", action="store_true")
    b.add_argument("--html", help="REPORT.html: per-op latency, latency histogram, memory timeline, flash/RAM")
    b.set_defaults(func=cmd_bench)

    bl = sub.add_parser("boards", help="list the boards: core, kernel tier, console, emulator, memory regions")
    bl.add_argument("board_files", nargs="*", help="board files NAME.json to check and list instead")
    bl.add_argument("--json", action="store_true")
    bl.set_defaults(func=cmd_boards)

    z = sub.add_parser("zoo", help="reference models (MLPerf Tiny and more) with seeded weights")
    zsub = z.add_subparsers(dest="zoo_command", required=True)
    zl = zsub.add_parser("list", help="list the zoo's models with their reference counts")
    zl.set_defaults(func=cmd_zoo_list)
    ze = zsub.add_parser("export", help="export a zoo model to a .pt2 and write its calibration .npz")
    ze.add_argument("name", help="a model of `mcuflow zoo list`")
    ze.add_argument("-o", "--output", required=True, help="NAME.pt2 (torch.export.save)")
    ze.add_argument("--checkpoint", help="CK.pt: a state_dict with trained weights (default: seeded random weights)")
    ze.add_argument("--calibration", help="CALIB.npz to write (default: <output stem>_calibration.npz)")
    ze.add_argument("--seed", type=int, default=0, help="weights and data seed (default 0)")
    ze.add_argument("--samples", type=int, default=100, help="calibration samples (default 100)")
    ze.set_defaults(func=cmd_zoo_export)

    v = sub.add_parser("validate", help="compare eager, float graph, quantized host and board outputs; check budgets",
                       description="The four comparisons on one serialized evaluation set, budgets checked line by "
                                   f"line (exit {EXIT_VALIDATION_FAILED} on any FAIL), and an atomic record directory.")
    v.add_argument("--model", help="MODEL.pt2 written by torch.export.save (eager = its exported module)")
    v.add_argument("--program", help="model.mfp compiled from that model")
    v.add_argument("--eval", help="EVAL.npz: one array per model input, named as the input, leading batch dimension")
    v.add_argument("--labels", help="LABELS.npy: one integer class per evaluation input")
    v.add_argument("--board", default="qemu-m55", help="emulated board (default qemu-m55)")
    v.add_argument("--budgets", help="budgets.toml: flash, ram, latency per board, quality (docs/validation.md)")
    v.add_argument("-o", "--output", help="record directory (appears only when complete)")
    v.add_argument("--worst", type=int, default=5, help="worst inputs listed per comparison (default 5)")
    v.add_argument("--timeout", type=float, default=DEFAULT_BOARD_TIMEOUT_S,
                   help="seconds per emulator run of up to 256 inputs")
    v.add_argument("--html", help="REPORT.html: error per layer, latency histogram, memory timeline, flash/RAM "
                                  "(one self-contained page)")
    v.add_argument("--progress", action="store_true", help="show the progress bar even when stderr is not a terminal")
    v.add_argument("--compare", nargs=2, metavar=("OLD_RECORD", "NEW_RECORD"), help="show what changed between two records")
    v.set_defaults(func=cmd_validate)
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
