"""Read an X window dump (``xwd -root``, Debian's x11-apps) into an RGB array, for screenshots of the real
screen (PyBullet's getCameraImage never shows the parameter panel or debug text)."""

import struct

import numpy as np


def read_xwd(data: bytes) -> np.ndarray:
    """(height, width, 3) uint8 from an XWD file of a 24/32-bit TrueColor ZPixmap."""
    fields = struct.unpack(">25I", data[:100])
    header_size, width, height = fields[0], fields[4], fields[5]
    byte_order, bits_per_pixel, bytes_per_line, ncolors = fields[7], fields[11], fields[12], fields[19]
    masks = fields[13 + 1:13 + 4]  # red, green, blue masks
    if bits_per_pixel not in (24, 32):
        raise ValueError(f"only 24 or 32 bits per pixel supported, got {bits_per_pixel}")
    start = header_size + 12 * ncolors
    raw = np.frombuffer(data[start:start + height * bytes_per_line], np.uint8).reshape(height, bytes_per_line)
    step = bits_per_pixel // 8
    raw = raw[:, :width * step].reshape(height, width, step).astype(np.uint32)
    order = range(step) if byte_order == 0 else range(step - 1, -1, -1)  # LSBFirst: byte 0 is the lowest
    pixels = sum(raw[..., i] << (8 * n) for n, i in enumerate(order))
    out = np.empty((height, width, 3), np.uint8)
    for c, mask in enumerate(masks):
        shift = (mask & -mask).bit_length() - 1
        out[..., c] = (pixels & mask) >> shift
    return out
