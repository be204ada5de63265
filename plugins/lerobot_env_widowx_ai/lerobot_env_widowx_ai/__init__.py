"""The app's Gymnasium environments (app.envs: ``app/WidowXAIPickCube-v0``, ``app/StationaryAIHandover-v0``)
as a LeRobot environment plugin.

lerobot >= 0.6 imports every installed distribution named ``lerobot_env_*`` when its scripts start, so after
``pip install plugins/lerobot_env_widowx_ai`` the command ``lerobot-eval --env.type=widowx_ai ...`` finds the
environment. lerobot 0.4.x has no such discovery: name the plugin on the command line,
``lerobot-eval --env.discover_packages_path=lerobot_env_widowx_ai --env.type=widowx_ai ...``.

Importing this package registers the Gymnasium ids (importing ``app.envs``) and, where lerobot is installed,
the EnvConfig subclasses ``widowx_ai``, ``stationary_ai_handover`` and one per task of app.tasks
(``widowx_ai_stack``, ``widowx_ai_place_in_bin``, ``widowx_ai_push``, ``widowx_ai_peg_in_hole``,
``stationary_ai_bimanual_lift``, ``stationary_ai_bimanual_insertion``: lerobot_env_widowx_ai.configs).
"""

from __future__ import annotations

import app.envs  # noqa: F401  (registers the app/... Gymnasium ids)

try:
    import lerobot.envs.configs  # noqa: F401
except ImportError:  # a plain Gymnasium install: the ids are registered, no EnvConfig to add
    pass
else:
    from lerobot_env_widowx_ai import configs as configs  # noqa: F401  (registers the EnvConfig subclasses)
