#!/usr/bin/env python3
"""Issue 22 item 4, measured: would a compact binary record fit in an ext4
inode's in-line extended attribute space, and what would that save?

    python3 bench/inode_records.py                 # record sizes over a generated sample (no root needed)
    python3 bench/inode_records.py --measure MNT   # + cold writes on an ext4 mounted at MNT (bench/xattrwrite.c)

The sample: URLs generated from the shapes public image hosts and CDNs use
(WordPress uploads, Shopify, imgur, Wikimedia thumbs, twimg, Unsplash/imgix,
Cloudinary, CloudFront, S3, googleusercontent, GitHub avatars) with random
names, ids and tokens, and the response headers asyncfetch stores
(HTTPCaching.Storability.storedHeaderNames) as nginx, Apache, S3/CloudFront,
Fastly, Cloudflare and Google's front ends typically send them. A model of
the real thing (this machine reaches only 127.0.0.0/8), seeded, so the
figures repeat.

The current record's size is computed exactly as CacheMetadata.encoded()
writes it (checked against a record asyncfetch wrote: --check). The compact
record is the one issue 22 sketches, laid out in `compact_size`.
"""
import argparse, os, random, statistics, string, subprocess, sys, time

WORDS = ("red blue summer sale shoe jacket logo banner hero product photo team office beach city night "
         "mountain coffee cake garden kitchen winter sport car bike house dog cat flower river sunset "
         "portrait studio wedding family design print poster cover thumb large small front back side").split()
HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + string.digits


def tok(r, n, alphabet=ALNUM):
    return "".join(r.choice(alphabet) for _ in range(n))


def slug(r, sep="-"):
    return sep.join(r.choice(WORDS) for _ in range(r.randint(2, 5)))


def http_date(r):
    return time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(r.randint(1_500_000_000, 1_790_000_000)))


def url_and_profile(r):
    """One URL and the kind of server that answers it."""
    w, h = r.choice([(320, 240), (640, 480), (800, 600), (1080, 720), (1200, 800), (1920, 1080)])
    kind = r.randrange(11)
    if kind == 0:
        return (f"https://www.{slug(r, '')[:18]}.{r.choice(['com', 'de', 'co.uk', 'org'])}/wp-content/uploads/"
                f"{r.randint(2015, 2026)}/{r.randint(1, 12):02d}/{slug(r)}-{w}x{h}.jpg", r.choice(["nginx", "apache"]))
    if kind == 1:
        return (f"https://cdn.shopify.com/s/files/1/{r.randint(0, 9999):04d}/{r.randint(0, 9999):04d}/{r.randint(0, 9999):04d}"
                f"/products/{slug(r, '_').upper()}_{w}x.jpg?v={r.randint(1_500_000_000, 1_790_000_000)}", "cloudflare")
    if kind == 2:
        return f"https://i.imgur.com/{tok(r, 7)}.{r.choice(['jpg', 'png', 'gif'])}", "fastly"
    if kind == 3:
        name = slug(r, "_").capitalize() + ".jpg"
        md5 = tok(r, 32, HEX)
        return f"https://upload.wikimedia.org/wikipedia/commons/thumb/{md5[0]}/{md5[:2]}/{name}/{w}px-{name}", "varnish"
    if kind == 4:
        return f"https://pbs.twimg.com/media/{tok(r, 15)}?format=jpg&name={r.choice(['small', 'medium', 'large'])}", "twimg"
    if kind == 5:
        return (f"https://images.unsplash.com/photo-{r.randint(1_400_000_000_000, 1_790_000_000_000)}-{tok(r, 12, HEX)}"
                f"?ixlib=rb-4.0.3&auto=format&fit=crop&w={w}&q=80", "imgix")
    if kind == 6:
        return (f"https://res.cloudinary.com/{slug(r, '')[:12]}/image/upload/c_fill,w_{w},h_{h}/v{r.randint(1_500_000_000, 1_790_000_000)}"
                f"/{r.choice(WORDS)}/{slug(r)}.jpg", "cloudinary")
    if kind == 7:
        return f"https://d{tok(r, 13).lower()}.cloudfront.net/assets/images/{slug(r)}.{r.choice(['png', 'jpg', 'webp'])}", "s3"
    if kind == 8:
        return (f"https://{slug(r, '')[:20]}.s3.{r.choice(['us-east-1', 'eu-west-1', 'ap-southeast-2'])}.amazonaws.com/"
                f"{r.choice(WORDS)}/{tok(r, 8, HEX)}-{tok(r, 4, HEX)}-{tok(r, 4, HEX)}-{tok(r, 4, HEX)}-{tok(r, 12, HEX)}.png", "s3")
    if kind == 9:
        return f"https://lh3.googleusercontent.com/{tok(r, r.randint(60, 140), ALNUM + '-_')}=w{w}-h{h}", "google"
    return f"https://avatars.githubusercontent.com/u/{r.randint(1, 190_000_000)}?v=4", "github"


def headers_for(r, profile, ext):
    """The stored response headers (name, value) in a typical order, and the Vary request values."""
    ctype = {"jpg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp"}.get(ext, "image/jpeg")
    date, lm = http_date(r), http_date(r)
    h = [("Date", date), ("Content-Type", ctype)]
    vary = []
    if profile == "nginx":
        h += [("Last-Modified", lm), ("ETag", f'"{tok(r, 8, HEX)}-{tok(r, r.randint(3, 5), HEX)}"')]
        if r.random() < 0.5:
            h += [("Expires", http_date(r)), ("Cache-Control", "max-age=31536000")]
    elif profile == "apache":
        h += [("Last-Modified", lm), ("ETag", f'"{tok(r, r.randint(3, 5), HEX)}-{tok(r, 13, HEX)}"'),
              ("Cache-Control", "max-age=2592000"), ("Expires", http_date(r))]
    elif profile == "cloudflare":
        h += [("Last-Modified", lm), ("ETag", f'"{tok(r, 32, HEX)}"'), ("Cache-Control", "public, max-age=31536000"),
              ("Vary", "Accept"), ("Age", str(r.randint(0, 900_000)))]
        vary = [("accept", "*/*")]
    elif profile == "fastly":
        h += [("Last-Modified", lm), ("ETag", f'"{tok(r, 32, HEX)}"'), ("Cache-Control", "public, max-age=31536000"),
              ("Age", str(r.randint(0, 900_000)))]
    elif profile == "varnish":
        h += [("Last-Modified", lm), ("ETag", f'"{tok(r, 32, HEX)}"'), ("Age", str(r.randint(0, 90_000)))]
    elif profile == "twimg":
        h += [("Last-Modified", lm), ("Cache-Control", "max-age=604800, must-revalidate"), ("Age", str(r.randint(0, 600_000)))]
    elif profile == "imgix":
        h += [("Last-Modified", lm), ("Cache-Control", "public, max-age=315360000"), ("Vary", "Accept"),
              ("Age", str(r.randint(0, 900_000)))]
        vary = [("accept", "*/*")]
    elif profile == "cloudinary":
        h += [("Last-Modified", lm), ("ETag", f'"{tok(r, 32, HEX)}"'), ("Cache-Control", "public, max-age=2592000"),
              ("Vary", "Accept"), ("Age", str(r.randint(0, 2_000_000)))]
        vary = [("accept", "*/*")]
    elif profile == "s3":
        h += [("Last-Modified", lm), ("ETag", f'"{tok(r, 32, HEX)}"')]
        if r.random() < 0.5:
            h += [("Age", str(r.randint(0, 80_000))), ("Cache-Control", "max-age=86400")]
    elif profile == "google":
        h += [("Expires", http_date(r)), ("Cache-Control", "public, max-age=86400, no-transform"),
              ("ETag", f'"v{r.randint(1, 9999)}"'), ("Age", str(r.randint(0, 80_000)))]
    else:  # github
        h += [("Last-Modified", lm), ("ETag", f'"{tok(r, 40, HEX)}"'), ("Cache-Control", "max-age=300"),
              ("Expires", http_date(r)), ("Age", str(r.randint(0, 300))), ("Vary", "Authorization,Accept-Encoding")]
        vary = [("authorization", ""), ("accept-encoding", "deflate, gzip, br, zstd")]
    return h, vary


def sample(n, seed=22):
    r = random.Random(seed)
    out = []
    for _ in range(n):
        url, profile = url_and_profile(r)
        ext = url.split("?")[0].rsplit(".", 1)[-1] if "." in url.rsplit("/", 1)[-1].split("?")[0] else "jpg"
        headers, vary = headers_for(r, profile, ext)
        t = 1_795_000_000 + r.randint(0, 10_000_000) + r.randint(0, 999_999) / 1e6
        out.append(dict(url=url, headers=headers, vary=vary, status=200, length=r.randint(2_000, 3_000_000),
                        times=(t, t + r.randint(500, 400_000) / 1e6, t + r.randint(400_001, 900_000) / 1e6),
                        mtime_ns=int(t * 1e9) + r.randint(0, 10**9), format=ext if ext in ("png", "gif", "webp") else "jpeg",
                        width=r.randint(16, 4000), height=r.randint(16, 4000)))
    return out


def swift_double(x):
    """Swift's description of a Double (shortest round trip), as Python's repr for these values."""
    return repr(round(x, 6))


def current_size(rec):
    """Bytes of CacheMetadata.encoded() ("asyncfetch-meta 2" line format)."""
    lines = ["asyncfetch-meta 2", "key " + "0" * 32, "url " + rec["url"], f"status {rec['status']}",
             "request-time " + swift_double(rec["times"][0]), "response-time " + swift_double(rec["times"][1]),
             "stored-time " + swift_double(rec["times"][2]), "has-body 1", f"body-length {rec['length']}",
             "body-digest xxh3-128 " + "0" * 32, f"body-mtime-ns {rec['mtime_ns']}", f"format {rec['format']}",
             f"width {rec['width']}", f"height {rec['height']}"]
    lines += [f"h {n} {v}" for n, v in rec["headers"]] + [f"v {n} {v}" for n, v in rec["vary"]] + ["end"]
    return sum(len(l.encode()) + 1 for l in lines)


# The compact record sketched in issue 22 item 4 (all integers little-endian, fixed width):
#   version 1, flags 1 (has body, digest algorithm, which optional fields follow),
#   status code 1 (a table of common codes; 0xFF + 2 bytes otherwise), content type code 1
#   (image/jpeg, image/png, … ; 0xFF: the text is in the tail), image format code 1,
#   stored time 8 (µs), response time 4 and request time 4 (µs before the one after),
#   body length 8, body mtime 8 (ns), body digest 16 (XXH3-128)            = 53 bytes, always
#   optional: width 4 + height 4; Date, Last-Modified, Expires, Age 4 each (u32 seconds, when the
#   text is the canonical IMF-fixdate / a decimal); Cache-Control: directive bits 1 + max-age 4
#   tail: per item a tag byte and a length byte, then the bytes: the URL, the ETag, Vary, the Vary
#   request values, any header not representable above (a non-canonical date, an unknown directive).
COMPACT_FIXED = 53
CC_KNOWN = {"public", "private", "no-cache", "no-store", "must-revalidate", "immutable", "no-transform", "proxy-revalidate"}


def compact_size(rec):
    size = COMPACT_FIXED + 8   # width and height
    tail = [rec["url"]]
    for name, value in rec["headers"]:
        n = name.lower()
        if n in ("date", "last-modified", "expires", "age"):
            size += 4
        elif n == "content-type":
            continue           # a code in the fixed part (all of the sample's types are common)
        elif n == "cache-control":
            parts = [p.strip() for p in value.split(",")]
            size += 1 + (4 if any(p.startswith("max-age=") for p in parts) else 0)
            unknown = [p for p in parts if p not in CC_KNOWN and not p.startswith("max-age=")]
            if unknown:
                tail.append(", ".join(unknown))
        else:
            tail.append(value)  # ETag, Vary, others
    tail += [f"{n} {v}" for n, v in rec["vary"]]
    return size + sum(2 + len(t.encode()) for t in tail)


def percentiles(xs):
    xs = sorted(xs)
    q = lambda p: xs[min(len(xs) - 1, int(p * len(xs)))]
    return f"min {xs[0]}, p10 {q(0.1)}, median {q(0.5)}, p90 {q(0.9)}, max {xs[-1]}"


def check_against_real():
    """A record asyncfetch 0.1.0 wrote (473 bytes) for http://127.0.0.1:46767/a.png from nginx."""
    rec = dict(url="http://127.0.0.1:46767/a.png", status=200, length=12420, mtime_ns=1795664148089112314,
               times=(1795664147.978725, 1795664148.091441, 1795664148.09147), format="png", width=64, height=64,
               headers=[("Date", "Thu, 26 Nov 2026 03:35:48 GMT"), ("Content-Type", "image/png"),
                        ("Last-Modified", "Thu, 26 Nov 2026 03:35:47 GMT"), ("ETag", '"6b07a913-3084"')], vary=[])
    return current_size(rec), compact_size(rec)


def measure_writes(mnt, sizes, reps, count, body):
    """Cold writes of `count` files of `body` bytes, each with a record of each size in `sizes`,
    alternating, `reps` rounds, each round in a new directory (removed after all rounds)."""
    here = os.path.dirname(os.path.abspath(__file__))
    writer = "/tmp/xattrwrite"
    subprocess.run(["cc", "-O2", "-o", writer, f"{here}/xattrwrite.c"], check=True)
    results = {s: [] for s in sizes}
    dirs = []
    for rep in range(reps):
        for s in sizes:
            d = f"{mnt}/w{rep}-{s}"
            dirs.append(d)
            subprocess.run(["sync"], check=True)
            start = time.perf_counter()
            pid = os.posix_spawn(writer, [writer, d, str(count), str(body), str(s)], os.environ)
            _, status, ru = os.wait4(pid, 0)
            wall = time.perf_counter() - start
            if os.waitstatus_to_exitcode(status) != 0:
                raise SystemExit(f"xattrwrite failed for record size {s}")
            start = time.perf_counter()
            fd = os.open(mnt, os.O_RDONLY)
            os.syncfs(fd) if hasattr(os, "syncfs") else subprocess.run(["sync", "-f", mnt], check=True)
            os.close(fd)
            flush = time.perf_counter() - start
            blocks = os.stat(f"{d}/{0:032x}").st_blocks * 512
            results[s].append((wall, ru.ru_utime + ru.ru_stime, ru.ru_stime, flush, blocks))
    for d in dirs:
        subprocess.run(["rm", "-rf", d], check=True)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10_000, help="records in the sample (default 10000)")
    ap.add_argument("--inline", type=int, default=56,
                    help="largest user.asyncfetch.meta value kept in the inode (default 56: 256-byte inodes, measured)")
    ap.add_argument("--measure", metavar="MNT", help="an ext4 mount to run the cold-write comparison on")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    real = check_against_real()
    print(f"check: the real 473-byte record computes as {real[0]} bytes (current), {real[1]} bytes (compact)")
    recs = sample(args.n)
    urls = [len(r["url"].encode()) for r in recs]
    cur = [current_size(r) for r in recs]
    comp = [compact_size(r) for r in recs]
    etags = [len(v) for r in recs for n, v in r["headers"] if n == "ETag"]
    print(f"sample of {len(recs)}: URL bytes {percentiles(urls)}")
    print(f"ETag bytes ({len(etags)} of {len(recs)} have one): {percentiles(etags)}")
    print(f"current record bytes: {percentiles(cur)}")
    print(f"compact record bytes: {percentiles(comp)}; fixed part {COMPACT_FIXED} + 8 (width, height), before any header or the URL")
    for limit, what in ((args.inline, "256-byte inode, user.asyncfetch.meta"), (68, "256-byte inode, a 1-letter name (user.m)"),
                        (312, "512-byte inode (mkfs.ext4 -I 512)")):
        print(f"fit in {limit} bytes ({what}): current {sum(c <= limit for c in cur) / len(cur):.1%}, "
              f"compact {sum(c <= limit for c in comp) / len(comp):.1%}")
    if args.measure:
        sizes = [int(statistics.median(cur)), int(statistics.median(comp)), args.inline]
        res = measure_writes(args.measure, sizes, args.reps, 10_000, 12_420)
        print(f"cold writes, 10,000 files of 12,420 B on {args.measure}, open/write/fsetxattr/close, "
              f"median of {args.reps} (min), alternating:")
        for s, runs in res.items():
            walls, cpus, syss, flushes, blocks = zip(*runs)
            print(f"  record {s:4d} B: wall {statistics.median(walls) * 1000:5.0f} ms ({min(walls) * 1000:5.0f}), "
                  f"cpu {statistics.median(cpus) * 1000:4.0f} ms ({min(cpus) * 1000:4.0f}; sys {statistics.median(syss) * 1000:4.0f}), "
                  f"then syncfs {statistics.median(flushes) * 1000:5.0f} ms ({min(flushes) * 1000:5.0f}); "
                  f"{blocks[0] // 1024} KiB allocated per file")


if __name__ == "__main__":
    main()
