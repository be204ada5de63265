"""The import map of docs/architecture.md holds: every file of app/ belongs to a layer and imports only the layers
below it, the top of app/ holds only the commands and the shared vocabulary, no command imports another, only
app/sim imports PyBullet, every module named in a string exists, and there is no import cycle. Read from the
source with ast (nothing run)."""

import ast
import importlib.util
import re
from pathlib import Path

from tests.conftest import ROOT

APP = ROOT / "app"
VOCABULARY = {"errors", "validation"}  # what every layer may say: the exception family, boundary checks
COMMANDS = {"run", "record", "replay", "track", "solve", "sweep", "eval", "plan", "learn"}  # python -m app.X; nothing imports them
LOWER = {"vocabulary", "runtime", "kernels", "specs", "kinematics", "collision", "ik", "control", "tasks", "sim",
         "render", "dataset", "config", "planning", "quality"}
ALLOWED = {  # layer -> the layers it may import (besides itself)
    "vocabulary": set(),
    "runtime": {"vocabulary"},
    "kernels": {"vocabulary", "runtime"},
    "specs": {"vocabulary"},
    "kinematics": {"vocabulary", "kernels"},
    "collision": {"vocabulary", "kernels", "runtime", "kinematics"},
    "ik": {"vocabulary", "kernels", "kinematics", "collision"},
    "planning": {"vocabulary", "kernels", "kinematics", "collision", "ik", "dataset"},  # dataset: the Trossen names of an export
    "control": {"vocabulary", "kernels", "kinematics", "collision", "ik"},
    "sim": {"vocabulary", "runtime", "kernels", "kinematics", "collision", "ik", "specs", "planning"},  # planning:
    # the scene robot's Genesis-style plan_path (planning never imports sim: the robot hands over its worlds)
    "render": {"vocabulary", "runtime"},
    "dataset": {"vocabulary", "runtime"},
    "tasks": {"vocabulary", "kernels", "kinematics", "collision", "ik", "control", "specs"},
    "config": {"vocabulary", "kinematics", "collision", "control", "tasks", "specs"},  # collision: object meshes read at load
    "quality": {"vocabulary", "control"},  # control: the controllers' acceleration bound
    "episode": LOWER,
    "trossen_arm": LOWER | {"episode"},
    "envs": LOWER | {"episode"},
    "evaluation": LOWER | {"episode", "envs"},
    "recording": LOWER | {"episode"},
    "learning": LOWER | {"episode", "envs", "evaluation", "recording"},
    "package": {"vocabulary", "runtime", "kernels", "ik", "sim", "specs", "envs"},  # app/__init__.py: the public API
    "command": LOWER | {"episode", "recording", "package", "envs", "evaluation", "learning"},
}


def _layer(module: str) -> str:
    """'app.ik.solver' -> 'ik'; 'app.errors' -> 'vocabulary'; 'app.run' -> 'command'; 'app' -> 'package'."""
    parts = module.split(".")
    if len(parts) == 1:
        return "package"
    if len(parts) == 2 and parts[1] in VOCABULARY:
        return "vocabulary"
    if len(parts) == 2 and parts[1] in COMMANDS:
        return "command"
    return parts[1]


def _modules() -> dict[str, Path]:
    return {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
            for p in APP.rglob("*.py")}


def _imports() -> dict[str, set[str]]:
    """Module name -> the app modules it imports (at any depth of the file)."""
    graph = {}
    for module, path in _modules().items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "app":
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.split(".")[0] == "app"}
        graph[module] = found
    return graph


def _top_level_imports(path: Path) -> set[str]:
    return {n.module if isinstance(n, ast.ImportFrom) else a.name
            for n in ast.parse(path.read_text()).body if isinstance(n, (ast.Import, ast.ImportFrom))
            for a in (n.names if isinstance(n, ast.Import) else [n]) if (n.module if isinstance(n, ast.ImportFrom)
                                                                        else a.name)}


def test_every_file_of_app_is_under_a_layer_rule():
    unknown = sorted(m for m in _modules() if _layer(m) not in ALLOWED)
    assert not unknown, f"modules in no layer of ALLOWED (add the folder to docs/architecture.md and here): {unknown}"


def test_the_top_of_app_holds_only_the_commands_and_the_vocabulary():
    top = {p.stem for p in APP.glob("*.py")} - {"__init__"}
    assert top == COMMANDS | VOCABULARY, f"not a command nor vocabulary: {sorted(top - COMMANDS - VOCABULARY)}"


def test_every_layer_imports_only_the_layers_below_it():
    violations = []
    for module, imported in _imports().items():
        layer = _layer(module)
        for target in imported:
            other = _layer(target)
            if other != layer and other not in ALLOWED[layer]:
                violations.append(f"{module} imports {target} ({layer} -> {other})")
    assert not violations, "\n".join(sorted(violations))


def test_no_command_imports_another():
    found = [f"{m} imports {t}" for m, targets in _imports().items() if _layer(m) == "command"
             for t in targets if _layer(t) == "command" and t != m]
    assert not found, found


def test_every_module_named_in_a_string_exists():
    """Strings that name a module (the render server's preload, Ray's references, sys.modules checks) resolve."""
    named = set()
    for path in APP.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and re.fullmatch(r"app(\.[a-z_][a-z0-9_]*)+", node.value):
                named.add((str(path.relative_to(ROOT)), node.value))
    assert any(name == "app.episode.render_preload" for _, name in named)  # the check sees the preload
    missing = [(where, name) for where, name in sorted(named) if importlib.util.find_spec(name) is None]
    assert not missing, missing


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
    """The layer map is not vacuous: app.sim imports ik, control may not import sim, and a command is a command."""
    graph = _imports()
    assert any(_layer(t) == "ik" for t in graph["app.sim.robot"])
    assert "sim" not in ALLOWED["control"] and "config" not in ALLOWED["control"]
    assert _layer("app.run") == "command" and _layer("app.episode.loop") == "episode"
    assert "command" not in ALLOWED["episode"] and "episode" not in ALLOWED["sim"]
