"""The Python package is layered: every import inside ``mcuflow`` points down the layer order
below (or stays within its layer), there is no import circle, and only the CLI parses command
lines. Read from the source with ``ast`` (imports inside functions count), nothing is imported."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "mcuflow"

# Lowest first. A module may import modules of its own layer or of layers before it.
LAYERS: list[tuple[str, set[str]]] = [
    ("errors", {"errors", "version"}),
    # firmware_sources: standard library only (a CMake script too); it locates the source tree boards read
    ("boards", {"firmware_sources", "boardfile", "boards", "uf2"}),
    ("io", {"outputs", "inputs", "program_metadata", "emulator", "uart", "qemu", "progress"}),
    ("memory map", {"memory_map"}),
    ("front ends", {"frontend_protocol", "torch_source", "torch_graph", "torch_pt2e", "frontend", "calibration",
                    "quantizer", "streaming", "audio",
                    "zoo", "zoo.mlperf", "zoo.families", "zoo.extra", "zoo.streaming"}),
    ("api", {"options", "fit", "mixed", "api"}),
    ("device", {"crossbuild", "device"}),
    ("measure", {"measure"}),
    ("bench", {"bench"}),
    ("validate", {"validate"}),
    ("reports", {"html_report"}),
    ("cli", {"cli"}),
    ("package", {""}),  # mcuflow/__init__.py: the public names
]
NATIVE = {"_core"}  # the compiled extension: below every layer
LAYER_OF = {module: i for i, (_, modules) in enumerate(LAYERS) for module in modules}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_module(name: str) -> bool:
    rel = PACKAGE.joinpath(*name.split("."))
    return name in NATIVE or rel.with_suffix(".py").is_file() or (rel / "__init__.py").is_file()


def imports_of(path: Path) -> set[str]:
    """The package modules ``path`` imports ("" is the package itself)."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".") if package else []
                base_parts = base_parts[:len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            elif node.module and (node.module == "mcuflow" or node.module.startswith("mcuflow.")):
                base = node.module.partition(".")[2]
            else:
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}" if base else alias.name
                found.add(sub if is_module(sub) else base)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "mcuflow" or alias.name.startswith("mcuflow."):
                    found.add(alias.name.partition(".")[2])
    return found - NATIVE - {here}


def import_graph() -> dict[str, set[str]]:
    return {module_name(p): imports_of(p) for p in sorted(PACKAGE.rglob("*.py"))}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each module that lies on one (depth-first search)."""
    found, state, stack = [], {}, []

    def visit(m: str) -> None:
        state[m] = "open"
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == "open":
                found.append(stack[stack.index(n):] + [n])
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m)
    return found


def test_every_module_has_a_layer():
    missing = sorted(m or "__init__" for m in import_graph() if m not in LAYER_OF)
    assert not missing, f"modules without a layer in {__file__}: {missing}"


def test_imports_point_down_the_layers():
    wrong = [f"{m or 'mcuflow'} ({LAYERS[LAYER_OF[m]][0]}) imports {n or 'mcuflow'} ({LAYERS[LAYER_OF[n]][0]})"
             for m, deps in import_graph().items() for n in sorted(deps)
             if m in LAYER_OF and n in LAYER_OF and LAYER_OF[n] > LAYER_OF[m]]
    assert not wrong, "imports against the layer order:\n" + "\n".join(wrong)


def test_no_import_circles():
    found = cycles(import_graph())
    assert not found, "import circles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_only_the_cli_parses_command_lines():
    users = [module_name(p) for p in sorted(PACKAGE.rglob("*.py")) if module_name(p) != "cli"
             and any(isinstance(n, (ast.Import, ast.ImportFrom)) and
                     ("argparse" in [a.name for a in n.names] if isinstance(n, ast.Import) else n.module == "argparse")
                     or isinstance(n, ast.Attribute) and n.attr == "add_parser"
                     for n in ast.walk(ast.parse(p.read_text())))]
    assert not users, f"argparse outside cli.py: {users}"


def documented_layers(text: str) -> list[tuple[list[str], set[str]]]:
    """The layer table of docs/architecture.md: per row, its layer names and the modules it names
    (`x.py`, a package as `zoo/`)."""
    table = text[text.index("| layer | modules |"):].split("\n\n")[0].splitlines()[2:]
    rows = []
    for row in table:
        layers, modules = row.strip("|").split("|", 1)
        named = set()
        for m in re.findall(r"`([\w/]+)(?:\.py|/)`", modules):
            named |= {n for n in LAYER_OF if n == m or n.startswith(m + ".")}
        rows.append(([name.strip() for name in layers.split(",")], named))
    return rows


def test_the_architecture_doc_lists_the_layers_in_order():
    rows = documented_layers((PACKAGE.parents[1] / "docs" / "architecture.md").read_text())
    documented = [name for names, _ in rows for name in names]
    assert documented == [name for name, _ in LAYERS if name != "package"]
    for names, modules in rows:
        assert modules == set().union(*(dict(LAYERS)[n] for n in names)), names


def test_the_checks_see_a_circle_and_an_upward_import():
    graph = {"api": {"device"}, "device": {"api"}, "errors": {"cli"}}
    assert cycles(graph) == [["api", "device", "api"]]
    assert LAYER_OF["cli"] > LAYER_OF["errors"]
