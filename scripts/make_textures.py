"""Write the kit look's procedural textures (app.render.textures) to assets/textures/: maple.png, concrete.png.

    python scripts/make_textures.py [--size 256]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import imageio.v2 as imageio

from app.render.textures import concrete, wood_grain

OUT = Path(__file__).resolve().parents[1] / "assets" / "textures"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256, help="side of each square texture [px]")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    for name, image in (("maple", wood_grain(args.size)), ("concrete", concrete(args.size))):
        imageio.imwrite(OUT / f"{name}.png", image)
        print(f"wrote {OUT / f'{name}.png'} {image.shape}")


if __name__ == "__main__":
    main()
