"""Draw the five small car-damage pictures the offline demo ships (pure Python, no PIL).

Each is a side view of a car with the damaged part marked in red, standing in for the seed
notebook's photos (which live in a cloud bucket and cannot be fetched offline).
Run: python scripts/make_demo_images.py  (writes src/rubriclab/demo_images/*.png)
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

W, H = 192, 120
SKY, ROAD, BODY, GLASS, WHEEL, DAMAGE = (
    (222, 235, 247),
    (90, 90, 96),
    (52, 101, 164),
    (170, 205, 230),
    (30, 30, 30),
    (214, 39, 40),
)
Box = tuple[int, int, int, int]

# x0, y0, x1, y1 of the car's parts
HOOD: Box = (124, 52, 168, 66)
BUMPER: Box = (166, 62, 178, 80)
CABIN: Box = (58, 30, 124, 54)
WINDSHIELD: Box = (110, 32, 124, 52)
DOORS: Box = (60, 54, 122, 80)
ENGINE: Box = (126, 40, 176, 62)  # buckled hood raised over an exposed engine
DAMAGED = {
    "bumper": [BUMPER],
    "engine_compartment": [ENGINE, HOOD],
    "hood": [HOOD],
    "lateral": [DOORS],
    "windshield": [WINDSHIELD],
}


def draw(damage: list[Box]) -> list[list[tuple[int, int, int]]]:
    img = [[SKY if y < 86 else ROAD for _ in range(W)] for y in range(H)]

    def fill(box: Box, colour: tuple[int, int, int]) -> None:
        x0, y0, x1, y1 = box
        for y in range(y0, y1):
            for x in range(x0, x1):
                img[y][x] = colour

    fill((20, 52, 178, 80), BODY)
    fill(CABIN, BODY)
    fill((64, 34, 106, 52), GLASS)
    fill(WINDSHIELD, GLASS)
    for cx in (50, 146):  # wheels
        for y in range(70, 94):
            for x in range(cx - 12, cx + 12):
                if (x - cx) ** 2 + (y - 82) ** 2 <= 144:
                    img[y][x] = WHEEL
    for box in damage:  # cracks: a red zig-zag hatch over the damaged part
        x0, y0, x1, y1 = box
        for y in range(y0, y1):
            for x in range(x0, x1):
                if (x + 2 * y) % 7 in (0, 1):
                    img[y][x] = DAMAGE
    return img


def png(pixels: list[list[tuple[int, int, int]]]) -> bytes:
    raw = b"".join(b"\x00" + bytes(c for px in row for c in px) for row in pixels)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", W, H, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def main() -> None:
    out = Path(__file__).resolve().parents[1] / "src" / "rubriclab" / "demo_images"
    out.mkdir(parents=True, exist_ok=True)
    for name, boxes in DAMAGED.items():
        (out / f"{name}.png").write_bytes(png(draw(boxes)))
        print(out / f"{name}.png")


if __name__ == "__main__":
    main()
