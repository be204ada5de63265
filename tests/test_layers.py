"""The import map of docs/architecture.md holds: each package imports only the layers below it, only
app/sim imports PyBullet, and there is no import cycle. Read from the source with ast (nothing run)."""

import ast
from pathlib import Path

from tests.conftest import ROOT

APP = ROOT / "app"
LEAF = {"errors", "validation", "threads", "kernel_cache", "ray_session", "leftovers", "signals",
        "manipulation_defaults", "render_server"}
ALLOWED = {  # package -> packages it may import (besides itself); "leaf": the LEAF modules above
    "leaf": set(),
    "kinematics": {"leaf"},
    "collision": {"leaf", "kinematics"},
    "ik": {"leaf", "kinematics", "collision"},
    "control": {"leaf", "kinematics", "ik", "collision"},
    "sim": {"leaf", "kinematics", "ik", "collision"},
    "render": {"leaf"},
    "config": {"leaf", "kinematics", "control"},
    "dataset": {"leaf", "render"},
}
COMPOSITION = {"cli", "run", "runner", "build", "gui", "golden", "video_job", "render_preload", "scale", "sweep",
               "solve", "observe", "observe_arms", "run_report", "replay", "record", "record_blocks", "record_cameras",
               "track", "track_run", "__init__"}


def _package(module: str) -> str:
    """'app.ik.solver' -> 'ik'; leaf modules -> 'leaf'; composition modules -> their name."""
    part = module.split(".")[1] if "." in module else "__init__"
    return "leaf" if part in LEAF else part


def _imports() -> dict[str, set[str]]:
    """Module name -> the app modules it imports (at any depth of the file)."""
    graph = {}
    for path in APP.rglob("*.py"):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("app"):
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.startswith("app")}
        graph[module] = found
    return graph


def _top_level_imports(path: Path) -> set[str]:
    return {n.module if isinstance(n, ast.ImportFrom) else a.name
            for n in ast.parse(path.read_text()).body if isinstance(n, (ast.Import, ast.ImportFrom))
            for a in (n.names if isinstance(n, ast.Import) else [n]) if (n.module if isinstance(n, ast.ImportFrom)
                                                                        else a.name)}


def test_every_package_imports_only_the_layers_below_it():
    violations = []
    for module, imported in _imports().items():
        package = _package(module)
        if package in COMPOSITION:
            continue
        for target in imported:
            other = _package(target)
            if other != package and other not in ALLOWED[package]:
                violations.append(f"{module} imports {target} ({package} -> {other})")
    assert not violations, "\n".join(sorted(violations))


def test_only_app_sim_imports_pybullet():
    users = sorted(str(p.relative_to(ROOT)) for p in APP.rglob("*.py")
                   if any(m.split(".")[0] == "pybullet" for m in _top_level_imports(p))
                   or "import pybullet" in p.read_text())
    assert users and all(u.startswith("app/sim/") for u in users), users


def test_there_is_no_import_cycle():
    graph = _imports()
    graph = {m: {t for t in targets if t in graph} for m, targets in graph.items()}
    state: dict[str, int] = {}

    def visit(module: str, trail: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                raise AssertionError(" -> ".join(trail[trail.index(target):] + [target]) if target in trail
                                     else f"{module} -> {target}")
            if target not in state:
                visit(target, trail + [target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])


def test_the_checks_see_a_violation():
    """The package map is not vacuous: app.sim imports ik, and control may not import sim."""
    graph = _imports()
    assert any(_package(t) == "ik" for t in graph["app.sim.robot"])
    assert "sim" not in ALLOWED["control"] and "config" not in ALLOWED["control"]
