#!/usr/bin/env python3
"""Writes a seeded corpus of image bodies for the differential completeness
test, with what real decoders say about each one.

usage: image_corpus.py OUTDIR [--seed N] [--count N]

Every format asyncfetch accepts is encoded by Pillow (pillow-heif for HEIF,
pillow-jxl-plugin for JPEG XL; SVG is written as text), then each image
becomes several bodies: whole, whole with trailing data (1 B to 1 MiB of
random bytes, zeros or HTML), cut at many offsets, and with one byte flipped.
OUTDIR/manifest.tsv gets one line per body:

    file  base-format  kind  image-length  pillow  magick  width  height

kind is whole, trailing, cut or flip; image-length is the length of the
encoded image (the body's real end); pillow and magick are "ok", "bad" or
"-" (decoder not installed); width and height are what Pillow read from the
whole image (0 when unknown). Nothing but the standard library, Pillow and
its plugins is needed; ImageMagick's `identify -regard-warnings` is asked
too when it is installed.
"""
import io
import os
import random
import shutil
import subprocess
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor

from PIL import Image, ImageFile

ImageFile.LOAD_TRUNCATED_IMAGES = False
warnings.simplefilter("error")   # a decoder warning (truncated, corrupt) counts as a rejection
try:
    import pillow_heif
    pillow_heif.register_heif_opener()
except ImportError:
    pillow_heif = None
try:
    import pillow_jxl  # noqa: F401  (registers the JXL plugin)
    HAS_JXL = True
except ImportError:
    HAS_JXL = False

HTML = (b"<!DOCTYPE html>\n<html><head><title>Not Found</title></head>"
        b"<body><h1>404 Not Found</h1><p>nginx</p></body></html>\n")


def picture(rng, width, height, mode="RGB"):
    """A noisy gradient: compresses like a photo, not like a flat colour."""
    img = Image.new("RGB", (width, height))
    px = img.load()
    a, b = rng.randrange(256), rng.randrange(256)
    for y in range(height):
        for x in range(width):
            px[x, y] = ((x * 7 + a + rng.randrange(24)) % 256, (y * 5 + b) % 256, (x * y + rng.randrange(40)) % 256)
    return img.convert(mode) if mode != "RGB" else img


def encode(img, fmt, **options):
    out = io.BytesIO()
    img.save(out, fmt, **options)
    return out.getvalue()


def svg(rng):
    w, h = rng.randrange(1, 900), rng.randrange(1, 900)
    shapes = "".join(f'<rect x="{rng.randrange(w)}" y="{rng.randrange(h)}" width="9" height="9" fill="#{rng.randrange(1 << 24):06x}"/>\n'
                     for _ in range(rng.randrange(1, 40)))
    nested = '<svg x="1" y="1" width="5" height="5"><circle cx="2" cy="2" r="2"/></svg>\n' if rng.random() < 0.5 else ""
    body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<!-- generated: <svg> in a comment -->\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">\n'
            f'<title>a &lt;test&gt;</title>\n{nested}{shapes}<![CDATA[ </svg> ]]>\n</svg>\n')
    return body.encode(), w, h


def images(rng):
    """(format, bytes, width, height) for every format and several encodings."""
    out = []
    def add(fmt, data, size):
        if fmt != "svg":
            with Image.open(io.BytesIO(data)) as decoded:   # the size a decoder reports (HEIF: after its crop)
                size = decoded.size
        out.append((fmt, data, size[0], size[1]))
    for _ in range(4):
        w, h = rng.randrange(1, 160), rng.randrange(1, 120)
        img = picture(rng, w, h)
        add("png", encode(img, "PNG"), img.size)
        add("png", encode(img.convert("RGBA"), "PNG", optimize=True), img.size)
        add("png", encode(img.convert("P"), "PNG"), img.size)
        add("jpeg", encode(img, "JPEG", quality=rng.randrange(40, 95)), img.size)
        add("jpeg", encode(img, "JPEG", progressive=True, quality=80), img.size)
        add("jpeg", encode(img, "JPEG", quality=85, restart_marker_blocks=4), img.size)
        add("gif", encode(img.convert("P"), "GIF"), img.size)
        frames = [picture(rng, w, h).convert("P") for _ in range(3)]
        add("gif", encode(frames[0], "GIF", save_all=True, append_images=frames[1:], duration=50, loop=0), img.size)
        add("webp", encode(img, "WEBP", quality=70), img.size)
        add("webp", encode(img, "WEBP", lossless=True), img.size)
        add("webp", encode(img.convert("RGBA"), "WEBP", quality=60, exif=b"Exif\x00\x00" + bytes(10)), img.size)
        add("bmp", encode(img, "BMP"), img.size)
        add("bmp", encode(img.convert("P"), "BMP"), img.size)
        add("tiff", encode(img, "TIFF"), img.size)
        add("tiff", encode(img, "TIFF", compression="tiff_lzw"), img.size)
        add("tiff", encode(img, "TIFF", compression="tiff_deflate"), img.size)
        ico_img = picture(rng, 48, 48)
        add("ico", encode(ico_img, "ICO", sizes=[(16, 16), (32, 32), (48, 48)]), (48, 48))
        add("avif", encode(img, "AVIF", quality=60), img.size)
        if pillow_heif is not None:
            add("heif", encode(img, "HEIF", quality=60), img.size)
        if HAS_JXL:
            add("jxl", encode(img, "JXL", quality=80), img.size)
            add("jxl", encode(img, "JXL", lossless=True), img.size)
            add("jxl", encode(img.convert("RGBA"), "JXL", quality=60, effort=3), img.size)
            add("jxl", encode(img.convert("L"), "JXL", quality=90, effort=9), img.size)
        data, sw, sh = svg(rng)
        add("svg", data, (sw, sh))
    big = picture(rng, 700, 500)
    add("png", encode(big, "PNG"), big.size)
    add("jpeg", encode(big, "JPEG", progressive=True), big.size)
    add("tiff", encode(big, "TIFF", tiffinfo={}), big.size)
    if HAS_JXL:
        add("jxl", encode(big, "JXL", quality=75), big.size)            # many groups: a TOC of many entries
        add("jxl", encode(big, "JXL", lossless=True, effort=2), big.size)
    return out


def trailer(rng):
    size = int(2 ** rng.uniform(0, 20))           # 1 B .. 1 MiB, log-uniform
    kind = rng.choice(["random", "zeros", "html"])
    if kind == "zeros":
        return bytes(size)
    if kind == "html":
        return (HTML * (size // len(HTML) + 1))[:size]
    return rng.randbytes(size)


def bodies(rng, fmt, data):
    """(kind, bytes) variants of one image."""
    n = len(data)
    yield "whole", data
    for _ in range(4):
        yield "trailing", data + trailer(rng)
    cuts = {n - 1, n - 2, n // 2, 1 + n // 10}
    while len(cuts) < 12 and len(cuts) < n - 1:
        cuts.add(rng.randrange(1, n))
    for cut in sorted(cuts):
        if 0 < cut < n:
            yield "cut", data[:cut]
    for _ in range(4):
        i = rng.randrange(n)
        flipped = bytearray(data)
        flipped[i] ^= 1 << rng.randrange(8)
        yield "flip", bytes(flipped)


def pillow_verdict(path):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with Image.open(path) as img:
                img.load()
                frames = getattr(img, "n_frames", 1)
                for k in range(1, frames):
                    img.seek(k)
                    img.load()
        return "ok"
    except Exception:
        return "bad"


def magick_verdicts(paths):
    identify = shutil.which("identify")
    if identify is None or not os.path.exists("/usr/bin/identify"):
        return {p: "-" for p in paths}
    def verdict(p):
        try:
            r = subprocess.run([identify, "-regard-warnings", p], capture_output=True, timeout=20)
            return p, "ok" if r.returncode == 0 else "bad"
        except subprocess.TimeoutExpired:
            return p, "bad"
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(verdict, paths))


def main():
    args = sys.argv[1:]
    outdir = args[0]
    seed = int(args[args.index("--seed") + 1]) if "--seed" in args else 13
    magick = "--magick" in args
    rng = random.Random(seed)
    os.makedirs(outdir, exist_ok=True)
    rows = []
    for index, (fmt, data, w, h) in enumerate(images(rng)):
        for number, (kind, body) in enumerate(bodies(rng, fmt, data)):
            name = f"{index:03d}-{number:02d}-{kind}.{fmt}"
            path = os.path.join(outdir, name)
            with open(path, "wb") as f:
                f.write(body)
            verdict = "-" if fmt == "svg" else pillow_verdict(path)
            rows.append([name, fmt, kind, str(len(data)), verdict, "-", str(w), str(h)])
    if magick:
        verdicts = magick_verdicts([os.path.join(outdir, r[0]) for r in rows if r[1] != "svg"])
        for r in rows:   # ImageMagick 6 reads no JPEG XL: it has no say there
            r[5] = "-" if r[1] == "jxl" else verdicts.get(os.path.join(outdir, r[0]), "-")
    with open(os.path.join(outdir, "manifest.tsv"), "w") as f:
        for r in rows:
            f.write("\t".join(r) + "\n")
    print(f"{len(rows)} bodies in {outdir}")


if __name__ == "__main__":
    main()
