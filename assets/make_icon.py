#!/usr/bin/env python3
"""Draws the latscope icon: two timeline lanes, a command pulse and the IRQ it causes, the
two cursors on their rising edges and the latency between them as an arrow.

Writes icons/latscope.svg and icons/latscope-{256,128,64,48,32,16}.png next to this script.
Standard library only (the PNGs are rasterised here with 4x4 supersampling), so anyone can
run it again: `python3 assets/make_icon.py`.
"""

import os
import struct
import zlib

SIZE = 256
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "icons")

# The workbench's dark theme colours.
BG = (0x16, 0x18, 0x1D)
LANE = (0x1D, 0x20, 0x26)
COMMAND = (0x5F, 0xD3, 0x8A)  # a digital lane
IRQ = (0xEF, 0x6B, 0x5B)  # an interrupt line
CURSOR_A = (0xFF, 0xD1, 0x4A)
CURSOR_B = (0x4A, 0xD8, 0xFF)
ARROW = (0xD6, 0xDB, 0xE3)

# Geometry on a 256 x 256 canvas: (kind, colour, parameters), painted in order.
EDGE_A, EDGE_B = 84.0, 176.0
SHAPES = [
    ("rrect", BG, (8, 8, 248, 248, 44)),
    ("lane", LANE, (28, 52, 228, 112, 10)),
    ("lane", LANE, (28, 144, 228, 204, 10)),
    # The command: low, a pulse from EDGE_A, low again.
    ("path", COMMAND, ([(40, 100), (EDGE_A, 100), (EDGE_A, 64), (132, 64), (132, 100), (216, 100)], 7)),
    # The IRQ: low until EDGE_B, then high.
    ("path", IRQ, ([(40, 192), (EDGE_B, 192), (EDGE_B, 156), (216, 156)], 7)),
    # Cursors on both rising edges.
    ("path", CURSOR_A, ([(EDGE_A, 36), (EDGE_A, 220)], 4)),
    ("path", CURSOR_B, ([(EDGE_B, 36), (EDGE_B, 220)], 4)),
    # The latency: a double-headed arrow from edge to edge.
    ("path", ARROW, ([(EDGE_A + 16, 128), (EDGE_B - 16, 128)], 6)),
    ("tri", ARROW, ((EDGE_A + 4, 128), (EDGE_A + 22, 117), (EDGE_A + 22, 139))),
    ("tri", ARROW, ((EDGE_B - 4, 128), (EDGE_B - 22, 117), (EDGE_B - 22, 139))),
]


def in_rrect(x, y, p):
    x0, y0, x1, y1, r = p
    if x < x0 or x > x1 or y < y0 or y > y1:
        return False
    cx = min(max(x, x0 + r), x1 - r)
    cy = min(max(y, y0 + r), y1 - r)
    return (x - cx) ** 2 + (y - cy) ** 2 <= r * r


def near_segment(x, y, a, b, half):
    (ax, ay), (bx, by) = a, b
    dx, dy = bx - ax, by - ay
    t = ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)
    t = min(max(t, 0.0), 1.0)
    px, py = ax + t * dx - x, ay + t * dy - y
    return px * px + py * py <= half * half


def in_tri(x, y, p):
    (ax, ay), (bx, by), (cx, cy) = p

    def side(x1, y1, x2, y2):
        return (x - x2) * (y1 - y2) - (x1 - x2) * (y - y2)

    d1, d2, d3 = side(ax, ay, bx, by), side(bx, by, cx, cy), side(cx, cy, ax, ay)
    neg = d1 < 0 or d2 < 0 or d3 < 0
    pos = d1 > 0 or d2 > 0 or d3 > 0
    return not (neg and pos)


def covers(kind, p, x, y):
    if kind in ("rrect", "lane"):
        return in_rrect(x, y, p)
    if kind == "path":
        points, width = p
        return any(near_segment(x, y, a, b, width / 2) for a, b in zip(points, points[1:]))
    return in_tri(x, y, p)


def bbox(kind, p):
    if kind in ("rrect", "lane"):
        return p[0], p[1], p[2], p[3]
    pts = p[0] if kind == "path" else p
    pad = p[1] / 2 if kind == "path" else 0
    xs, ys = [q[0] for q in pts], [q[1] for q in pts]
    return min(xs) - pad, min(ys) - pad, max(xs) + pad, max(ys) + pad


def render(size=SIZE, ss=4):
    """Premultiplied RGBA floats, row-major."""
    px = [[0.0, 0.0, 0.0, 0.0] for _ in range(size * size)]
    scale = SIZE / size
    offsets = [(i + 0.5) / ss for i in range(ss)]
    for kind, colour, p in SHAPES:
        x0, y0, x1, y1 = bbox(kind, p)
        for py in range(max(0, int(y0 / scale) - 1), min(size, int(y1 / scale) + 2)):
            for pxl in range(max(0, int(x0 / scale) - 1), min(size, int(x1 / scale) + 2)):
                hits = sum(
                    covers(kind, p, (pxl + ox) * scale, (py + oy) * scale) for oy in offsets for ox in offsets
                )
                if not hits:
                    continue
                a = hits / (ss * ss)
                d = px[py * size + pxl]
                for c in range(3):
                    d[c] = colour[c] / 255 * a + d[c] * (1 - a)
                d[3] = a + d[3] * (1 - a)
    return px


def write_png(path, size, px):
    rows = bytearray()
    for y in range(size):
        rows.append(0)
        for x in range(size):
            r, g, b, a = px[y * size + x]
            un = (lambda v: round(min(1.0, v / a) * 255)) if a > 0 else (lambda v: 0)
            rows += bytes((un(r), un(g), un(b), round(a * 255)))

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n"
    png += chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(bytes(rows), 9))
    png += chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(png)


def hexc(c):
    return "#%02x%02x%02x" % c


def write_svg(path):
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" viewBox="0 0 256 256">']
    out.append("<title>latscope</title>")
    for kind, colour, p in SHAPES:
        if kind in ("rrect", "lane"):
            x0, y0, x1, y1, r = p
            out.append(
                f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" rx="{r}" fill="{hexc(colour)}"/>'
            )
        elif kind == "path":
            points, width = p
            pts = " ".join(f"{x:g},{y:g}" for x, y in points)
            out.append(
                f'<polyline points="{pts}" fill="none" stroke="{hexc(colour)}" stroke-width="{width}" '
                'stroke-linecap="round" stroke-linejoin="round"/>'
            )
        else:
            pts = " ".join(f"{x:g},{y:g}" for x, y in p)
            out.append(f'<polygon points="{pts}" fill="{hexc(colour)}"/>')
    out.append("</svg>\n")
    with open(path, "w") as f:
        f.write("\n".join(out))


def main():
    os.makedirs(OUT, exist_ok=True)
    write_svg(os.path.join(OUT, "latscope.svg"))
    for size in (256, 128, 64, 48, 32, 16):
        write_png(os.path.join(OUT, f"latscope-{size}.png"), size, render(size))


if __name__ == "__main__":
    main()
