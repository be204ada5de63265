"""The only package that imports PyBullet: loading, scenes, robots, markers."""
