#!/usr/bin/python3
"""Writes a compression bomb: CODING (gzip, deflate, br or zstd) of GIB gibibytes of zeros.

Cheap on purpose (under a second): gzip and deflate repeat one
self-contained deflate segment (a full flush resets the dictionary), zstd
repeats one frame (a zstd stream may hold many), and brotli repeats the
output of one flushed 16 MiB chunk, which is the same byte for byte once the
window holds only zeros. The gzip trailer's CRC is not that of the whole
body: a client must refuse the body long before it gets there.

Needs Debian's python3-brotli and zstd (`make deps`): run it with /usr/bin/python3.

usage: bomb.py CODING GIB OUT
"""
import subprocess
import sys
import zlib

MIB = 1 << 20


def deflate_stream(gib, wbits):
    """A zlib-family stream of `gib` GiB of zeros: header, repeated segment, end."""
    segment_size = 64 * MIB
    head = zlib.compressobj(9, zlib.DEFLATED, wbits)
    start = head.compress(b"") + head.flush(zlib.Z_FULL_FLUSH)     # the header (if any) alone
    seg = zlib.compressobj(9, zlib.DEFLATED, -15)
    segment = seg.compress(bytes(segment_size)) + seg.flush(zlib.Z_FULL_FLUSH)
    last = zlib.compressobj(9, zlib.DEFLATED, -15).flush(zlib.Z_FINISH)   # an empty final block
    count = gib * 1024 * MIB // segment_size
    if wbits > 15:   # gzip: CRC32 and size of the body (wrong CRC: see above)
        trailer = (0).to_bytes(4, "little") + ((gib << 30) & 0xFFFFFFFF).to_bytes(4, "little")
    else:            # zlib: Adler-32 (likewise not checked before the limit)
        trailer = (1).to_bytes(4, "big")
    return start + segment * count + last + trailer


def main():
    coding, gib, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if coding == "gzip":
        data = deflate_stream(gib, 31)
    elif coding == "deflate":
        data = deflate_stream(gib, 15)
    elif coding == "zstd":
        frame = subprocess.run(["zstd", "-q", "-1", "-c"], input=bytes(256 * MIB), check=True,
                               stdout=subprocess.PIPE).stdout
        data = frame * (gib * 4)
    elif coding == "br":
        import brotli
        compressor = brotli.Compressor(quality=1, lgwin=24)
        chunk = bytes(16 * MIB)
        first = [compressor.process(chunk) + compressor.flush() for _ in range(3)]
        unit = compressor.process(chunk) + compressor.flush()
        data = b"".join(first) + unit * (gib * 64 - 3) + compressor.finish()
    else:
        sys.exit("unknown coding " + coding)
    with open(out, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
