#!/usr/bin/env python3
"""Interleaved A/B of two asyncfetch binaries on the cache-hit cases (fresh,
offline and revalidate, 10,000 URLs), on tmpfs: one cache filled once, then each repetition
runs A then B (then B then A), so a slow spell of the shared VM hits both.

  python3 bench/ab.py --a OLD_BINARY --b NEW_BINARY [--reps 9] [--n 10000] [--hosts 1] [--cold]

--cold measures the cold case instead: every run downloads all N URLs into a new cache
(removed before each run, not timed), with make bench's concurrency (--jobs 8 --jobs-per-host 8).

--hosts H spreads the URLs over H hosts (127.0.0.1 … 127.0.0.H, one nginx listening on each):
with one host every transfer runs on one transfer loop, with several on all of them.

--dir DIR puts every file (nginx's, the cache) under DIR instead of /dev/shm: /var/tmp for the
VM's ext4 disk. --cases fresh,offline keeps only those hit cases. --c-loop adds make bench's
offline reference to every repetition (bench/md5stat.c, EVP: an MD5 and a `stat` per URL) and
runs the offline case as make bench does (`--jobs 8 --jobs-per-host 8 --offline --input`, the
human lines to /dev/null), then prints each binary's wall over the C loop's, median of the
repetitions' ratios and their spread.

--remote measures make bench's remote-tier cases instead (`bench.py --remote-only`): cold from the
origin, cold with the uploads to a second nginx (WebDAV, a new prefix each run), and warm from the
tier into a new local cache (a prefix the first binary filled once, read by both).
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import Nginx, measure, png  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="the old binary")
    ap.add_argument("--b", required=True, help="the new binary")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--hosts", type=int, default=1, help="spread the URLs over this many hosts (1-200)")
    ap.add_argument("--cold", action="store_true", help="the cold case (a new cache each run) instead of the hits")
    ap.add_argument("--remote", action="store_true", help="the remote tier's cases (cold, cold + uploads, warm from the tier)")
    ap.add_argument("--dir", default="/dev/shm", help="where the files go (/var/tmp: the VM's ext4 disk)")
    ap.add_argument("--cases", default="fresh,offline,revalidate", help="the hit cases to run, comma-separated")
    ap.add_argument("--c-loop", action="store_true", help="make bench's offline case beside its C loop (md5stat.c)")
    args = ap.parse_args()
    every_case = ("fresh", "offline", "revalidate")
    unknown = [c for c in args.cases.split(",") if c not in every_case]
    if unknown:
        ap.error(f"--cases: unknown {', '.join(unknown)} (the hit cases are {', '.join(every_case)})")
    if args.c_loop and (args.cold or args.remote):
        ap.error("--c-loop goes with the hit cases only, not --cold or --remote (their cache is removed before each run)")
    if args.c_loop and "offline" not in args.cases.split(","):
        ap.error("--c-loop runs beside the offline case: add offline to --cases")
    root = tempfile.mkdtemp(prefix="asyncfetch-ab-", dir=args.dir)
    os.chmod(root, 0o755)  # nginx workers run as another user
    nginx = tier = None
    try:
        www = f"{root}/www"
        os.makedirs(www)
        body = png(64, 60, 1)
        for i in range(args.n):
            with open(f"{www}/{i}.png", "wb") as f:
                f.write(body)
            # Dated 30 days back: Last-Modified then gives 3 days of heuristic
            # freshness, so the cache-hit cases are answered without the network.
            os.utime(f"{www}/{i}.png", (time.time() - 30 * 86400,) * 2)
        hosts = [f"127.0.0.{h}" for h in range(1, max(1, min(200, args.hosts)) + 1)]
        nginx = Nginx(www, f"{root}/nginx", addresses=hosts)
        urls = f"{root}/urls.txt"
        with open(urls, "w") as f:
            f.write("".join(f"http://{hosts[i % len(hosts)]}:{nginx.port}/{i}.png\n" for i in range(args.n)))
        cache = f"{root}/cache"
        if args.c_loop:   # as make bench has it: a symlink to the directory (the C loop's paths go through it)
            os.makedirs(f"{root}/cache-0")
            os.symlink(f"{root}/cache-0", cache)
        if args.remote:
            store = f"{root}/store"
            os.makedirs(store)
            os.chmod(store, 0o777)   # nginx's workers (nobody) write here
            tier = Nginx(store, f"{root}/nginx-tier",
                         extra="open_file_cache off; location /cache/ { dav_methods PUT DELETE; create_full_put_path on; client_max_body_size 0; }")
            tierURL = f"http://127.0.0.1:{tier.port}/cache"
        fill = measure([args.a, "--cache-dir", cache, "-q", "--input", urls], stdout=f"{root}/fill.out")
        if fill[3] != 0:
            raise SystemExit(f"filling the cache failed: {fill}: " + open(f"{root}/fill.out").read()[:500])
        if args.remote:   # the tier's warm prefix, filled once by A (a cold run with uploads)
            shutil.rmtree(cache, ignore_errors=True)
            fill = measure([args.a, "--cache-dir", cache, "-q", "--remote-cache", f"{tierURL}/warm/", "--input", urls])
            if fill[3] != 0 or len(os.listdir(f"{store}/cache/warm")) != args.n:
                raise SystemExit(f"filling the tier failed: {fill}")
            cases = {"cold, origin only": ["-q", "--input", urls],
                     "cold + uploads to the tier": ["-q", "--remote-cache", None, "--input", urls],
                     "warm from the tier": ["-q", "--remote-cache", f"{tierURL}/warm/", "--input", urls]}
        elif args.cold:   # the fill above warmed nginx's open-file cache for it
            cases = {"cold (new cache)": ["-q", "--jobs", "8", "--jobs-per-host", "8", "--input", urls]}
        else:
            offline = (["--jobs", "8", "--jobs-per-host", "8", "--offline", "--input", urls] if args.c_loop
                       else ["-q", "--offline", "--input", urls])
            every = {"fresh": ["-q", "--input", urls], "offline": offline,
                     "revalidate": ["-q", "--refresh", "--input", urls]}
            cases = {name: every[name] for name in args.cases.split(",")}
        loop = []   # the C loop's runs (wall, CPU), one per repetition
        if args.c_loop:
            md5stat = f"{root}/md5stat"
            subprocess.run(["cc", "-O2", "-o", md5stat, f"{os.path.dirname(os.path.abspath(__file__))}/md5stat.c", "-lcrypto"],
                           check=True)
        results = {(c, w): [] for c in cases for w in "ab"}
        for rep in range(args.reps):
            order = "ab" if rep % 2 == 0 else "ba"
            for case, extra in cases.items():
                for who in order:
                    binary = args.a if who == "a" else args.b
                    if args.cold or args.remote:
                        shutil.rmtree(cache, ignore_errors=True)
                    # A new prefix for each run with uploads: every object is PUT again.
                    given = [f"{tierURL}/r{rep}{who}/" if arg is None else arg for arg in extra]
                    m = measure([binary, "--cache-dir", cache, *given])
                    if m[3] != 0:
                        raise SystemExit(f"{who} {case} exited {m[3]}")
                    results[(case, who)].append(m)
            if args.c_loop:
                m = measure([md5stat, cache, urls])
                if m[3] != 0:
                    raise SystemExit(f"the C loop exited {m[3]}")
                loop.append(m)
        print(f"| case | A (old) median | B (new) median | B/A median | B/A min | CPU A | CPU B |")
        print("|---|---|---|---|---|---|---|")
        for case in cases:
            a, b = results[(case, "a")], results[(case, "b")]
            am, bm = statistics.median(x[0] for x in a), statistics.median(x[0] for x in b)
            amin, bmin = min(x[0] for x in a), min(x[0] for x in b)
            ac, bc = statistics.median(x[1] for x in a), statistics.median(x[1] for x in b)
            print(f"| {case} {args.n}{f' over {len(hosts)} hosts' if len(hosts) > 1 else ''} | {am*1000:.1f} ms | {bm*1000:.1f} ms | {bm/am:.3f} | {bmin/amin:.3f} | {ac*1000:.0f} ms | {bc*1000:.0f} ms |")
        if loop and "offline" in cases:
            lm, lc = statistics.median(x[0] for x in loop), statistics.median(x[1] for x in loop)
            print(f"\nC loop (md5stat, EVP) on {args.dir}: wall {lm*1000:.1f} ms (min {min(x[0] for x in loop)*1000:.1f}), CPU {lc*1000:.0f} ms")
            for who in "ab":
                runs = results[("offline", who)]
                ratios = sorted(r[0] / l[0] for r, l in zip(runs, loop))
                print(f"offline {who.upper()} / C loop: median of medians {statistics.median(r[0] for r in runs) / lm:.2f} "
                      f"(min over min {min(r[0] for r in runs) / min(l[0] for l in loop):.2f}); per repetition median "
                      f"{statistics.median(ratios):.2f}, range {ratios[0]:.2f}–{ratios[-1]:.2f}; "
                      f"CPU per URL {statistics.median(r[1] for r in runs) / args.n * 1e6:.1f} µs against {lc / args.n * 1e6:.1f}")
    finally:
        for server in (nginx, tier):
            if server:
                server.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
