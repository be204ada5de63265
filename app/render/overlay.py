"""What a video frame shows on top of the rendered scene (Pillow): every target frame drawn over the
picture, so one inside the table or an obstacle stays visible, a status dot per environment, and a
caption with the run's name, the simulated time and how many environments have reached their targets."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from app.render.framing import CameraView

AXIS_RGB = ((235, 40, 40), (40, 215, 60), (50, 110, 255))  # x, y, z
OUTLINE_RGB = (15, 15, 15)


class OverlayStyle(NamedTuple):
    """Sizes of what is drawn: axis_length [m] of a target frame, drawn at least ``min_axis_px`` long;
    line width [px]; font size [px]; ``legend``: (label, RGB) per status code; ``target_labels``: a name per
    target of an environment (T,), written beside its frame (the arm it moves), or () for none."""

    axis_length: float
    min_axis_px: float
    line_px: int
    font_px: int
    legend: tuple[tuple[str, tuple[int, int, int]], ...]
    target_labels: tuple[str, ...] = ()

    @classmethod
    def for_view(cls, view: CameraView, legend: Sequence, axis_length: float = 0.08,
                 target_labels: Sequence[str] = ()) -> OverlayStyle:
        """Sizes that read at this picture size: axes at least 1/16 of the height long (for the default 0.08 m
        axes; shorter ones in proportion) and ~1/130 wide (3 px at 480 px lines), text ~1/32."""
        return cls(axis_length, view.height / 16 * min(1.0, axis_length / 0.08), max(3, round(view.height / 130)),
                   max(11, round(view.height / 32)), tuple((str(label), tuple(rgb)) for label, rgb in legend),
                   tuple(str(label) for label in target_labels))


class FrameOverlay(NamedTuple):
    """One frame's annotations (world frame). targets_pos (n_envs, T, 3) [m], targets_rot (n_envs, T, 3, 3);
    status (n_envs,) codes into the legend; anchors (n_envs, 3): where each environment's dot goes."""

    title: str
    t: float
    targets_pos: np.ndarray
    targets_rot: np.ndarray
    status: np.ndarray
    anchors: np.ndarray
    reached_code: int = 0
    notes: tuple[str, ...] | None = None  # a word per environment beside its number (a pick's phase or result)
    marks: np.ndarray | None = None  # (n_envs, M, 3) world points drawn as rings (a pick's place target)
    finished: int | None = None  # environments whose phased episode is done (a pick's); None: not a phased motion
    paths: np.ndarray | None = None  # (n_envs, P, 3) world points of planned paths drawn as lines (NaN: none)
    finished_word: str = "done"  # what ``finished`` counts: "done" (the episodes ended), "success" (the task's)


@functools.lru_cache(maxsize=8)
def _font(size: int) -> ImageFont.ImageFont:  # loaded once per size: ~0.15 ms each time
    return ImageFont.load_default(size=size)


def draw_overlay(image: np.ndarray, view: CameraView, frame: FrameOverlay, style: OverlayStyle) -> np.ndarray:
    """``image`` (H, W, 3) uint8 with the annotations drawn; a new array."""
    picture = Image.fromarray(image)
    draw = ImageDraw.Draw(picture)
    if frame.paths is not None:
        _draw_paths(draw, view, frame.paths, style)
    if frame.marks is not None:
        _draw_marks(draw, view, frame.marks.reshape(-1, 3), style)
    _draw_frames(draw, view, frame.targets_pos.reshape(-1, 3), frame.targets_rot.reshape(-1, 3, 3), style)  # env-major
    _draw_status(draw, view, frame, style)
    _draw_caption(draw, frame, style)
    return np.asarray(picture)


def _draw_frames(draw: ImageDraw.ImageDraw, view: CameraView, pos: np.ndarray, rot: np.ndarray,
                 style: OverlayStyle) -> None:
    """Each frame's three axes, outlined in dark, long axes last so the nearest-to-viewer stays on top."""
    shown = np.isfinite(pos).all(axis=1)  # NaN: no frame to draw (an environment whose episode is done)
    pos = np.where(shown[:, None], pos, 0.0)
    origin_px, in_front = view.project(pos)
    in_front = in_front & shown
    tips_px, _ = view.project(pos[:, None, :] + style.axis_length * rot.transpose(0, 2, 1))
    w = style.line_px
    for k in np.flatnonzero(in_front):
        o = origin_px[k]
        ends = []
        for a in range(3):
            d = tips_px[k, a] - o
            length = np.hypot(*d)
            scale = max(1.0, style.min_axis_px / length) if length > 1e-6 else 0.0
            ends.append(o + d * scale)
        for a in sorted(range(3), key=lambda a: -np.hypot(*(ends[a] - o))):
            draw.line([tuple(o), tuple(ends[a])], fill=OUTLINE_RGB, width=w + 2)
            draw.line([tuple(o), tuple(ends[a])], fill=AXIS_RGB[a], width=w)
        r = w + 1
        draw.ellipse([o[0] - r, o[1] - r, o[0] + r, o[1] + r], fill=(245, 245, 245), outline=OUTLINE_RGB)
        if style.target_labels:
            _draw_label(draw, (o[0] - r - 2, o[1] + r + 1), style.target_labels[k % len(style.target_labels)], style)


def _draw_label(draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, style: OverlayStyle) -> None:
    """``text`` in white on a dark outline, its top right corner at ``xy`` (below and left of a frame's origin,
    away from the axes that mostly point up and right)."""
    font = _font(max(9, style.font_px - 3))
    x = xy[0] - draw.textlength(text, font=font)
    draw.text((x, xy[1]), text, fill=(255, 255, 255), font=font, stroke_width=2, stroke_fill=OUTLINE_RGB)


PATH_RGB = (0, 215, 255)


def _draw_paths(draw: ImageDraw.ImageDraw, view: CameraView, paths: np.ndarray, style: OverlayStyle) -> None:
    """Each environment's planned paths (P, 3) as cyan lines on a dark outline: a row of NaN ends a line (no path,
    or between two arms' paths); points behind the camera are left out."""
    flat = np.nan_to_num(paths.reshape(-1, 3).astype(float))
    px, in_front = view.project(flat)
    finite = np.isfinite(paths.reshape(-1, 3)).all(axis=1) & in_front
    px, finite = px.reshape(len(paths), -1, 2), finite.reshape(len(paths), -1)
    w = max(2, style.line_px - 1)
    for e in range(len(paths)):
        cuts = np.flatnonzero(np.diff(np.concatenate([[0], finite[e].astype(int), [0]])))
        for start, stop in zip(cuts[::2], cuts[1::2]):
            points = [tuple(p) for p in px[e][start:stop]]
            if len(points) >= 2:
                draw.line(points, fill=OUTLINE_RGB, width=w + 2, joint="curve")
                draw.line(points, fill=PATH_RGB, width=w, joint="curve")


MARK_RADIUS = 0.045  # [m]: a place mark's ring on the table, wider than a 5 cm cube's half-diagonal (35 mm),
# so that the object placed on it is seen inside the ring rather than under it
MARK_SIDES = 32


def _draw_marks(draw: ImageDraw.ImageDraw, view: CameraView, points: np.ndarray, style: OverlayStyle) -> None:
    """A thin yellow ring of MARK_RADIUS on the horizontal plane around each point (M, 3), drawn in perspective;
    nothing inside it, so what stands on the point stays visible."""
    angles = np.linspace(0.0, 2 * np.pi, MARK_SIDES, endpoint=False)
    circle = MARK_RADIUS * np.stack([np.cos(angles), np.sin(angles), np.zeros_like(angles)], axis=1)
    w = max(1, style.line_px - 1)
    for point in points[np.isfinite(points).all(axis=1)]:
        px, in_front = view.project(point + circle)
        if not in_front.all():
            continue
        ring = [tuple(p) for p in px] + [tuple(px[0])]
        draw.line(ring, fill=OUTLINE_RGB, width=w + 2, joint="curve")
        draw.line(ring, fill=(255, 220, 0), width=w, joint="curve")


def _draw_status(draw: ImageDraw.ImageDraw, view: CameraView, frame: FrameOverlay, style: OverlayStyle) -> None:
    """A dot coloured by status with the environment's number beside it."""
    px, in_front = view.project(frame.anchors)
    font = _font(max(9, style.font_px - 3))
    r = max(4, style.font_px // 3)
    for e in np.flatnonzero(in_front):
        x, y = px[e]
        rgb = style.legend[int(frame.status[e])][1]
        draw.ellipse([x - r, y - r, x + r, y + r], fill=rgb, outline=OUTLINE_RGB, width=1)
        label = str(e) if frame.notes is None else f"{e} {frame.notes[e]}"
        draw.text((x + r + 3, y - r + 1), label, fill=OUTLINE_RGB, font=font)  # a shadow: stroked text costs 3x
        draw.text((x + r + 2, y - r), label, fill=(255, 255, 255), font=font)


def _draw_caption(draw: ImageDraw.ImageDraw, frame: FrameOverlay, style: OverlayStyle) -> None:
    """Top left: name, time, reached n/N; below it the legend of the codes present in this frame."""
    font = _font(style.font_px)
    text = caption_text(frame)
    pad = style.font_px // 3
    draw.rectangle(_box(draw, (pad, pad), text, font, pad), fill=(0, 0, 0))
    draw.text((2 * pad, 2 * pad), text, fill=(255, 255, 255), font=font)
    x, y = 2 * pad, 4 * pad + style.font_px
    small = _font(max(9, style.font_px - 3))
    for code in sorted(set(int(c) for c in frame.status)):
        label, rgb = style.legend[code]
        r = max(4, style.font_px // 3)
        draw.ellipse([x, y + 2, x + 2 * r, y + 2 + 2 * r], fill=rgb, outline=OUTLINE_RGB)
        draw.text((x + 2 * r + 4, y), label, fill=(255, 255, 255), font=small, stroke_width=2, stroke_fill=OUTLINE_RGB)
        x += 2 * r + 12 + int(draw.textlength(label, font=small))


def caption_text(frame: FrameOverlay) -> str:
    """The caption's first line: name, time, and how many environments are done (a phased motion's episodes,
    ``frame.finished``) or have reached their target (the status codes), out of all."""
    n = len(frame.status)
    if frame.finished is not None:
        return f"{frame.title}   t = {frame.t:5.2f} s   {frame.finished_word} {frame.finished}/{n}"
    return f"{frame.title}   t = {frame.t:5.2f} s   reached {int(np.sum(frame.status == frame.reached_code))}/{n}"


def _box(draw: ImageDraw.ImageDraw, xy: tuple[int, int], text: str, font, pad: int) -> tuple[int, int, int, int]:
    left, top, right, bottom = draw.textbbox((xy[0] + pad, xy[1] + pad), text, font=font)
    return xy[0], xy[1], right + pad, bottom + pad
