"""Procedural textures for the kit look (app.specs.look_spec): a maple-like wood grain for the tabletop and a
light concrete floor, made from seeded noise with numpy alone (no image is copied from anywhere).
``scripts/make_textures.py`` writes them to ``assets/textures/`` (the files the scenes use)."""

from __future__ import annotations

import numpy as np

MAPLE_RGB = (0.86, 0.70, 0.50)  # a light maple's mean colour (linear 0..1)
FLOOR_RGB = (0.62, 0.62, 0.60)


def _smooth_noise(rng: np.random.Generator, shape: tuple[int, int], cells: tuple[int, int]) -> np.ndarray:
    """Value noise (shape) in [0, 1]: a random (cells) grid interpolated bicubically-smooth, tiling."""
    h, w = shape
    grid = rng.random(cells)
    y = np.linspace(0, cells[0], h, endpoint=False)
    x = np.linspace(0, cells[1], w, endpoint=False)
    y0, x0 = np.floor(y).astype(int), np.floor(x).astype(int)
    fy, fx = y - y0, x - x0
    fy, fx = fy * fy * (3 - 2 * fy), fx * fx * (3 - 2 * fx)
    y1, x1 = (y0 + 1) % cells[0], (x0 + 1) % cells[1]
    top = grid[y0][:, x0] * (1 - fx) + grid[y0][:, x1] * fx
    bottom = grid[y1][:, x0] * (1 - fx) + grid[y1][:, x1] * fx
    return top * (1 - fy)[:, None] + bottom * fy[:, None]


def _fractal(rng: np.random.Generator, shape: tuple[int, int], cells: tuple[int, int], octaves: int) -> np.ndarray:
    """Octaves of value noise, each twice as fine and half as strong, scaled to [0, 1]."""
    out, weight = np.zeros(shape), 1.0
    for k in range(octaves):
        out += weight * _smooth_noise(rng, shape, (cells[0] * 2 ** k, cells[1] * 2 ** k))
        weight /= 2
    return (out - out.min()) / max(np.ptp(out), 1e-12)


def wood_grain(size: int = 256, seed: int = 0) -> np.ndarray:
    """A maple-like tabletop (size, size, 3) uint8: long growth rings along x bent by low-frequency noise, fine
    pores, and boards of slightly different tone across y."""
    rng = np.random.default_rng([seed, 1])
    y, x = np.mgrid[0:size, 0:size] / size
    warp = _fractal(rng, (size, size), (3, 1), 3)
    phase = 22 * y + 2.5 * warp + 0.4 * np.sin(2 * np.pi * x)
    rings = np.exp(-((phase % 1.0) - 0.5) ** 2 / 0.004)  # thin dark late-wood lines
    pores = _fractal(rng, (size, size), (96, 3), 2)
    boards = rng.uniform(-0.04, 0.04, 3)[(y * 3).astype(int)]
    tone = 1.0 - 0.16 * rings - 0.07 * pores + boards
    rgb = np.clip(tone[..., None] * np.array(MAPLE_RGB), 0, 1)
    return (rgb * 255 + 0.5).astype(np.uint8)


def concrete(size: int = 256, seed: int = 0) -> np.ndarray:
    """A light, mottled concrete floor (size, size, 3) uint8, with faint tile seams every quarter."""
    rng = np.random.default_rng([seed, 2])
    tone = 0.9 + 0.12 * (_fractal(rng, (size, size), (8, 8), 4) - 0.5)
    seam = np.zeros((size, size), bool)
    step = size // 4
    seam[::step, :] = seam[:, ::step] = True
    tone = np.where(seam, tone * 0.8, tone)
    rgb = np.clip(tone[..., None] * np.array(FLOOR_RGB) / 0.9, 0, 1)
    return (rgb * 255 + 0.5).astype(np.uint8)
