"""Imports point one way (DESIGN.md, "Layers"), and the light commands stay light.

Read from the source with `ast`, every import statement counts, including those inside
functions: numerics uses neither theory nor dynamics (a measurement never uses the
formula it checks); theory uses no other layer; dynamics only theory; figures neither
validation nor numerics; and nothing below validation imports it. Inside numerics, the
generic core reads neither paper's read-outs, and the two papers' read-outs not each other.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import icl_verify

ROOT = Path(__file__).resolve().parents[1]
LAYERS = icl_verify.SUBPACKAGES  # theory, dynamics, numerics, validation, figures
FORBIDDEN = {
    "theory": {"dynamics", "numerics", "validation", "figures"},
    "dynamics": {"numerics", "validation", "figures"},
    "numerics": {"theory", "dynamics", "validation", "figures"},
    "figures": {"numerics", "validation", "theory", "dynamics"},
    "validation": set(),
}


def imported_layers(path: Path) -> set[str]:
    """The layers a source file imports (icl_verify.<layer> or the bare layer name)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "icl_verify" and len(parts) > 1:
                parts = parts[1:]
            if parts[0] in LAYERS:
                found.add(parts[0])
    return found


@pytest.mark.parametrize("layer", LAYERS)
def test_layer_imports_point_downward(layer):
    upward = {
        str(path.relative_to(ROOT)): sorted(imported_layers(path) & FORBIDDEN[layer])
        for path in sorted((ROOT / layer).rglob("*.py"))
    }
    assert {k: v for k, v in upward.items() if v} == {}


def test_no_claim_module_imports_torch():
    """Claims are declarations: the tensors live in numerics (any import counts, also inside a
    function)."""
    importing = []
    for path in sorted((ROOT / "validation" / "claims").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(name.split(".")[0] == "torch" for name in names):
                importing.append(str(path.relative_to(ROOT)))
    assert importing == []


# The package's public facade: ``icl_verify.run``/``sweep`` (``__init__``, loaded on first use)
# and ``icl_verify.testing`` reach into validation from the top, inside functions; they are
# not shared helpers and nothing imports them, so no layer can import its way back up.
FACADE = ("__init__.py", "testing.py")


def test_shared_modules_of_the_root_package_import_no_layer():
    for path in (ROOT / "icl_verify").glob("*.py"):
        allowed = {"validation"} if path.name in FACADE else set()
        assert imported_layers(path) <= allowed, path


def test_no_layer_imports_the_facade():
    for layer in LAYERS:
        for path in (ROOT / layer).rglob("*.py"):
            text = path.read_text()
            assert "icl_verify.testing" not in text and "icl_verify.run(" not in text, path


def test_the_check_sees_a_function_level_upward_import(tmp_path):
    source = tmp_path / "x.py"
    source.write_text("def f():\n    from icl_verify.theory import manifold_mu\n")
    assert imported_layers(source) == {"theory"}


@pytest.mark.parametrize(
    "argv", [["list"], ["show", "HE-MAN"], ["--help"], ["run", "--help"]], ids=" ".join
)
def test_light_commands_import_neither_torch_nor_matplotlib(argv):
    program = (
        "import sys\n"
        "from icl_verify.validation.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'matplotlib'})\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=True
    )
    assert "HEAVY []" in result.stderr, result.stderr[-2000:]


# Inside numerics: the generic core reads no paper's read-outs, and each paper's read-outs
# read only the core (and their own part).
NUMERICS_PARTS = {"_core": {"_he2025", "_chen2024"}, "_he2025": {"_chen2024"},
                  "_chen2024": {"_he2025"}}  # fmt: skip


def numerics_parts_imported(path: Path) -> set[str]:
    """The parts of numerics (``_core``, ``_he2025``, ``_chen2024``) a source file imports."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        found |= {n.split(".")[2] for n in names if n.startswith("icl_verify.numerics._")}
    return found


@pytest.mark.parametrize("part", sorted(NUMERICS_PARTS))
def test_the_numerics_core_reads_no_paper_and_the_papers_not_each_other(part):
    wrong = {
        str(path.relative_to(ROOT)): sorted(numerics_parts_imported(path) & NUMERICS_PARTS[part])
        for path in sorted((ROOT / "numerics" / part).rglob("*.py"))
    }
    assert {k: v for k, v in wrong.items() if v} == {}


def test_the_check_sees_a_read_out_imported_by_the_core(tmp_path):
    source = tmp_path / "x.py"
    source.write_text("from icl_verify.numerics._he2025.settling import settled_mean\n")
    assert numerics_parts_imported(source) == {"_he2025"}


def test_a_torch_free_numerics_name_loads_no_torch():
    # the stub is read, not the modules: torch comes with the first name that needs it
    program = (
        "import sys\n"
        "import icl_verify.numerics as numerics\n"
        "numerics.single_thread, dir(numerics), numerics.__all__\n"
        "print('TORCH', 'torch' in sys.modules)\n"
        "numerics.Prompts\n"
        "print('TORCH', 'torch' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.split() == ["TORCH", "False", "TORCH", "True"], result.stdout
