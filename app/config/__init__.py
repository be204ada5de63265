"""YAML scenes and run configs -> frozen dataclasses, validated before anything runs."""

from app.config.loader import load_run_config
from app.config.schema import RunConfig, SceneConfig

__all__ = ["RunConfig", "SceneConfig", "load_run_config"]
