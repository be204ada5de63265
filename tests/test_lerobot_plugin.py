"""The LeRobot env plugin (plugins/lerobot_env_widowx_ai) without lerobot: importing it registers our Gymnasium
ids and adds no EnvConfig (its lerobot side runs in scripts/lerobot_end_to_end.sh, not in CI)."""

from __future__ import annotations

import importlib
import sys
import tomllib

import gymnasium as gym

from tests.conftest import ROOT

PLUGIN = ROOT / "plugins" / "lerobot_env_widowx_ai"


def test_the_plugin_imports_without_lerobot_and_registers_our_environment_ids(monkeypatch):
    monkeypatch.syspath_prepend(str(PLUGIN))
    monkeypatch.setitem(sys.modules, "lerobot", None)  # as in a Python without lerobot
    monkeypatch.delitem(sys.modules, "lerobot_env_widowx_ai", raising=False)
    plugin = importlib.import_module("lerobot_env_widowx_ai")
    assert not hasattr(plugin, "configs")
    assert {"app/WidowXAIPickCube-v0", "app/StationaryAIHandover-v0"} <= set(gym.registry)


def test_the_plugin_distribution_is_named_as_lerobot_discovers_plugins():
    meta = tomllib.loads((PLUGIN / "pyproject.toml").read_text())["project"]
    assert meta["name"].startswith("lerobot_env_") and meta["name"] == "lerobot_env_widowx_ai"
    assert (PLUGIN / meta["name"] / "__init__.py").is_file()  # lerobot >= 0.6 imports the distribution's name


def test_the_plugin_has_an_env_type_for_every_registered_id():
    """Each id app.envs registers (a task's env_id included) has an EnvConfig subclass naming it, read from the
    plugin's source (lerobot is not installed here)."""
    import ast

    from app.envs.registry import ENV_IDS

    tree = ast.parse((PLUGIN / "lerobot_env_widowx_ai" / "configs.py").read_text())
    named = {node.value.value for node in ast.walk(tree) if isinstance(node, ast.AnnAssign)
             and getattr(node.target, "id", None) == "task" and isinstance(node.value, ast.Constant)}
    assert {env_id.removeprefix("app/") for env_id in ENV_IDS} == named
