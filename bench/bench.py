#!/usr/bin/env python3
"""make bench: asyncfetch side by side with curl, wget and aria2c against a
local nginx on 127.0.0.1, in one run, with ratios: every case on tmpfs (/dev/shm) and on the disk
(/var/tmp), one table each.

Every figure is measured here, by this script, in this run: wall time,
user+sys CPU and peak RSS of each command (os.wait4 rusage), median and min
over --reps repetitions. The commands compared in a mode run in turn, one
repetition of each at a time, so that a slow spell of this shared VM hits
all of them alike. Files (nginx's, the cache, the peers' outputs) live on
the file system being measured. These are figures to report, not pass/fail
tests.

Then the internet-like case (bench/internet.py, issue 21): many simulated
hosts with latency, connection limits and failures in a network namespace,
asyncfetch beside curl, aria2c and img2dataset (--no-internet skips it,
--internet-only runs it alone).
"""
import argparse, os, resource, shutil, socket, statistics, struct, subprocess, sys, time, zlib, random

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import internet  # noqa: E402  (bench/internet.py: the internet-like case, issue 21)
from internet import png  # noqa: E402  (a real PNG of noise)


def count_name(count):
    """A URL count as the results name it: 10000 is "10k", 500 "0.5k" (not "0k"), 2500 "2.5k"."""
    return f"{count / 1000:g}k"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Nginx:
    def __init__(self, root, work, extra="", addresses=("127.0.0.1",)):
        self.work = work
        os.makedirs(f"{work}/logs", exist_ok=True)
        self.port = free_port()
        # Cached descriptors stay below half the open-file limit: a cache larger
        # than the limit made nginx fail "Too many open files" on 100,000 files.
        open_files = max(1000, min(30000, resource.getrlimit(resource.RLIMIT_NOFILE)[0] // 2))
        listens = " ".join(f"listen {address}:{self.port} backlog=4096;" for address in addresses)
        conf = f"""
worker_processes 1;
daemon off;
pid {work}/nginx.pid;
error_log {work}/logs/error.log warn;
events {{ worker_connections 4096; }}
http {{
    include /etc/nginx/mime.types;
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    open_file_cache max={open_files} inactive=60s;
    client_body_temp_path {work}/tmp; proxy_temp_path {work}/tmp; fastcgi_temp_path {work}/tmp;
    uwsgi_temp_path {work}/tmp; scgi_temp_path {work}/tmp;
    server {{ {listens} root {root}; {extra} }}
}}
"""
        os.makedirs(f"{work}/tmp", exist_ok=True)
        with open(f"{work}/nginx.conf", "w") as f:
            f.write(conf)
        self.proc = subprocess.Popen(["/usr/sbin/nginx", "-p", work, "-c", f"{work}/nginx.conf"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("nginx did not start: " + open(f"{work}/logs/error.log").read())

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def measure(cmd, env=None, stdout="/dev/null"):
    """Runs cmd; returns (wall s, user+sys s, peak RSS MiB, exit status).

    Peak RSS comes from GNU time's %M: ru_maxrss of a child spawned straight
    from this Python process would include Python's own pages (counted before
    exec). time's own start adds the same ~1 ms to every command."""
    rssfile = f"/tmp/asyncfetch-bench-rss.{os.getpid()}"
    cmd = ["/usr/bin/time", "-f", "%M", "-o", rssfile, *cmd]
    actions = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
               (os.POSIX_SPAWN_OPEN, 1, stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
               (os.POSIX_SPAWN_OPEN, 2, f"/tmp/asyncfetch-bench-stderr.{os.getpid()}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)]
    start = time.perf_counter()
    pid = os.posix_spawnp(cmd[0], cmd, env or os.environ, file_actions=actions)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    try:
        rss = int(open(rssfile).read().split()[-1]) / 1024.0
    except (OSError, ValueError, IndexError):
        rss = float("nan")
    return wall, ru.ru_utime + ru.ru_stime, rss, os.waitstatus_to_exitcode(status)


class Row:
    def __init__(self, name):
        self.name, self.walls, self.cpus, self.rss, self.codes = name, [], [], [], set()

    def add(self, m):
        self.walls.append(m[0]); self.cpus.append(m[1]); self.rss.append(m[2]); self.codes.add(m[3])

    @property
    def wall(self): return statistics.median(self.walls)


# Set ASYNCFETCH_BENCH_TAG to run two benches at once: each gets its own directories.
TAG = os.environ.get("ASYNCFETCH_BENCH_TAG", "")


def fmt(s):
    return f"{s*1000:.1f} ms" if s < 1 else f"{s:.3f} s"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="asyncfetch binary (release build)")
    ap.add_argument("--only", choices=["tmpfs", "disk"], help="measure on one file system only (default: both)")
    ap.add_argument("--reps", type=int, default=5, help="repetitions of each case (default 5)")
    ap.add_argument("--small", type=int, default=10000, help="size of the big small-file set (default 10000)")
    ap.add_argument("--quick", action="store_true", help="cold modes only (issue 3's table)")
    ap.add_argument("--offline-only", action="store_true",
                    help="only the offline case (issue 22: asyncfetch --offline beside the C loops), on the big set")
    ap.add_argument("--skip-slow-peers", action="store_true", help="skip wget and aria2c")
    ap.add_argument("--remote-only", action="store_true",
                    help="only the remote cache tier's case (issue 17): cold from the origin vs warm from an nginx WebDAV tier")
    ap.add_argument("--decode-only", action="store_true",
                    help="only the --decode case (issue 23: cold runs with and without --decode, on tmpfs)")
    ap.add_argument("--no-internet", action="store_true", help="skip the internet-like case (issue 21; --quick skips it too)")
    ap.add_argument("--internet-only", action="store_true",
                    help="only the internet-like case (issue 21): many hosts with latency, 429s and failures, in a network namespace")
    internet.add_arguments(ap)
    args = ap.parse_args()
    if args.internet_only:
        internet.run(args)
        return
    if args.decode_only:
        print("\n" + run_decode(args, "tmpfs", f"/dev/shm/asyncfetch-bench{TAG}"))
        return
    places = [("tmpfs", f"/dev/shm/asyncfetch-bench{TAG}"), ("disk", f"/var/tmp/asyncfetch-bench{TAG}")]
    runner = run_remote if args.remote_only else run
    tables = [runner(args, label, base) for label, base in places if args.only in (None, label)]
    if not args.remote_only and not args.quick and not args.offline_only and args.only in (None, "tmpfs"):
        tables.append(run_remote(args, "tmpfs", places[0][1]))
        tables.append(run_decode(args, "tmpfs", places[0][1]))
    if not args.remote_only and not args.quick and not args.offline_only and not args.no_internet:
        tables.append(internet.run(args))
    for table in tables:
        print("\n" + table)


def run(args, fs, base):
    """Measures every case with its files under `base`; returns the ratio table."""
    binary = os.path.abspath(args.bin)
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(f"{base}/www/small"); os.makedirs(f"{base}/www/large")
    variants = [png(64, 64, seed) for seed in range(16)]          # ~12.4 KB each
    for i in range(args.small):
        with open(f"{base}/www/small/s{i:06d}.png", "wb") as f:
            f.write(variants[i % len(variants)])
    big = png(1870, 1870, 99)                                       # ~10 MiB
    for i in range(20):
        with open(f"{base}/www/large/l{i:02d}.png", "wb") as f:
            f.write(big)
    # Files last modified 30 days ago, as a site's images usually are: nginx's
    # Last-Modified then makes them fresh for 3 days (RFC 9111 §4.2.2), so the
    # warm "fresh" mode is cache hits. Files written just now would be fresh
    # for a fraction of a second and every warm run would revalidate.
    old = time.time() - 30 * 86400
    for folder in ("small", "large"):
        for leaf in os.listdir(f"{base}/www/{folder}"):
            os.utime(f"{base}/www/{folder}/{leaf}", (old, old))
    md5stat = f"{base}/md5stat"
    subprocess.run(["cc", "-O2", "-o", md5stat, f"{HERE}/md5stat.c", "-lcrypto"], check=True)
    md5stat_md5 = f"{base}/md5stat-md5"
    subprocess.run(["cc", "-O2", "-DLOW_LEVEL_MD5", "-o", md5stat_md5, f"{HERE}/md5stat.c", "-lcrypto"], check=True)
    nginx = Nginx(f"{base}/www", f"{base}/nginx")
    url = f"http://127.0.0.1:{nginx.port}"
    sets = {
        "1k": [f"{url}/small/s{i:06d}.png" for i in range(min(1000, args.small))],
        count_name(args.small): [f"{url}/small/s{i:06d}.png" for i in range(args.small)],
        "20x10MiB": [f"{url}/large/l{i:02d}.png" for i in range(20)],
    }
    small_big = count_name(args.small)
    for name, urls in sets.items():
        with open(f"{base}/{name}.txt", "w") as f:
            f.write("\n".join(urls) + "\n")
    usage = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    has_input = "--input" in usage
    # As many transfers as curl --parallel-max 8 runs against the one server: the
    # defaults (--jobs 64, --jobs-per-host 6) would run 6 (binaries before the
    # per-host limit had --jobs 8 as their default).
    same_concurrency = ["--jobs", "8"] + (["--jobs-per-host", "8"] if "--jobs-per-host" in usage else [])

    def af(name, *extra, cache):
        listing = f"{base}/{name}.txt"
        urls = ["--input", listing] if has_input else sets[name]
        return [binary, "--cache-dir", cache, *same_concurrency, *extra, *urls]

    def curl_cfg(name, out, etags=None, compare=False):
        cfg = f"{base}/{name}.curl{'-etag' if etags else ''}{'-cmp' if compare else ''}.cfg"
        with open(cfg, "w") as f:
            for n, u in enumerate(sets[name]):
                leaf = u.rsplit("/", 1)[1]
                if etags and n > 0:
                    f.write("next\n")          # per-URL options need a --next between transfers
                f.write(f'url = "{u}"\noutput = "{out}/{leaf}"\n')
                if etags:
                    f.write(f'etag-save = "{etags}/{leaf}.etag"\n')
                    if compare:
                        f.write(f'etag-compare = "{etags}/{leaf}.etag"\n')
        return cfg

    spent = []   # directories of earlier repetitions, removed once a group is measured

    def fresh(path):
        """`path` becomes a symlink to a new empty directory. The previous
        one is removed only after the group (`forget`): deleting 10,000 files
        right before the next run would make ext4's inode allocator skip the
        just-freed inodes one by one (recently_deleted), a cost that lands on
        whichever tool runs next."""
        target = f"{path}-{len(spent)}-{time.monotonic_ns()}"
        os.makedirs(target)
        if os.path.islink(path):
            spent.append(os.readlink(path))
            os.unlink(path)
        elif os.path.exists(path):
            shutil.rmtree(path)
        os.symlink(target, path)
        return path

    def forget():
        while spent:
            shutil.rmtree(spent.pop(), ignore_errors=True)

    results = []   # (mode, set, Row, reference name or None)

    def report(mode, setname, row):
        results.append((mode, setname, row))
        print(f"  {mode:<11} {setname:<9} {row.name:<34} wall {fmt(row.wall):>10} (min {fmt(min(row.walls)):>9})"
              f"  cpu {fmt(statistics.median(row.cpus)):>10} (min {fmt(min(row.cpus)):>9})"
              f"  rss {max(row.rss):6.1f} MiB  exit {sorted(row.codes)}", flush=True)

    def bench(mode, setname, label, cmd_factory, reps, prepare=None, env=None):
        group(setname, [(mode, label, cmd_factory, prepare)], reps, env)

    def group(setname, entries, reps, env=None):
        """Runs the commands of `entries` (mode, label, command factory,
        prepare) in turn, `reps` rounds, and reports each."""
        rows = [Row(label) for _, label, _, _ in entries]
        for _ in range(reps):
            for (_, _, cmd_factory, prepare), row in zip(entries, rows):
                if prepare: prepare()
                row.add(measure(cmd_factory(), env=env))
        forget()
        for (mode, _, _, _), row in zip(entries, rows):
            report(mode, setname, row)

    cache = f"{base}/cache"; out = f"{base}/out"; etags = f"{base}/etags"

    def offline(name, reps):
        """asyncfetch --offline beside the two C loops, on a filled cache."""
        group(name, [
            ("offline", "asyncfetch --offline", lambda: af(name, "--offline", cache=cache), None),
            ("offline", "C loop: md5 + stat", lambda: [md5stat, cache, f"{base}/{name}.txt"], None),
            ("offline", "C loop, MD5(): md5 + stat", lambda: [md5stat_md5, cache, f"{base}/{name}.txt"], None),
        ], reps)
    print(f"asyncfetch {subprocess.run([binary, '--version'], capture_output=True, text=True).stdout.strip()}, "
          f"{subprocess.run(['curl', '--version'], capture_output=True, text=True).stdout.split(chr(10))[0]}")
    print(f"files on {fs} ({base}); nginx 1 worker on 127.0.0.1:{nginx.port}; "
          f"median of {args.reps} (slow peers: fewer)\n")
    try:
        for name in sets:
            reps = args.reps
            if args.offline_only:
                if name == small_big:
                    fresh(cache); measure(af(name, cache=cache))   # fill the cache once
                    offline(name, reps)
                continue
            cfg = curl_cfg(name, out)
            cold = [
                ("cold", "asyncfetch --jobs 8 --jobs-per-host 8", lambda: af(name, cache=cache), lambda: fresh(cache)),
                ("cold", "curl --parallel-max 8", lambda: ["curl", "-s", "--parallel", "--parallel-max", "8", "-K", cfg],
                 lambda: fresh(out)),
            ]
            if fs == "tmpfs":
                cold.append(("cold", "curl --parallel-max 32", lambda: ["curl", "-s", "--parallel", "--parallel-max", "32", "-K", cfg],
                             lambda: fresh(out)))
            group(name, cold, reps)
            if args.quick or name == "1k":
                continue
            slow = 1 if name == small_big else reps
            peers = not args.skip_slow_peers and fs == "tmpfs"
            if peers:
                bench("cold", name, "wget -i", lambda: ["wget", "-q", "-i", f"{base}/{name}.txt", "-P", out], slow, lambda: fresh(out))
                bench("cold", name, "aria2c -j 8", lambda: ["aria2c", "-q", "-j", "8", "--remote-time=true", "-i", f"{base}/{name}.txt",
                      "-d", out], slow, lambda: fresh(out))
            # warm modes: the cache (and peers' files) populated once
            fresh(cache); measure(af(name, cache=cache))
            fresh(out); fresh(etags)
            measure(["curl", "-s", "--parallel", "--parallel-max", "8", "-K", curl_cfg(name, out, etags)])
            cmp_cfg = curl_cfg(name, out, etags, compare=True)
            # A 304 leaves every entry fresh: the three alternate without disturbing each other.
            group(name, [
                ("fresh", "asyncfetch (no request)", lambda: af(name, cache=cache), None),
                ("revalidate", "asyncfetch --refresh (304s)", lambda: af(name, "--refresh", cache=cache), None),
                ("revalidate", "curl p8 --etag-compare (304s)",
                 lambda: ["curl", "-s", "--parallel", "--parallel-max", "8", "-K", cmp_cfg], None),
            ], reps)
            if peers:
                fresh(out); measure(["wget", "-q", "-i", f"{base}/{name}.txt", "-P", out])
                bench("revalidate", name, "wget -N -i", lambda: ["wget", "-q", "-N", "-i", f"{base}/{name}.txt", "-P", out], slow)
                fresh(out); measure(["aria2c", "-q", "-j", "8", "--remote-time=true", "-i", f"{base}/{name}.txt", "-d", out])
                bench("revalidate", name, "aria2c --conditional-get", lambda: ["aria2c", "-q", "-j", "8", "--remote-time=true",
                      "--conditional-get=true", "--allow-overwrite=true", "-i", f"{base}/{name}.txt", "-d", out], slow)
            if name == small_big:
                offline(name, reps)
        if not args.quick and fs == "tmpfs":
            # 100,000-line input: peak RSS while streaming (offline misses, no network)
            many = f"{base}/100k.txt"
            with open(many, "w") as f:
                for i in range(100_000):
                    f.write(f"{url}/nowhere/{i}.png\n")
            if has_input and not args.offline_only:
                bench("offline", "100k", "asyncfetch --offline (misses)", lambda: [binary, "--cache-dir", cache, "--offline",
                      "--input", many], max(1, args.reps // 2))
            # one cached URL, whole process
            one = sets["1k"][0]
            measure([binary, "--cache-dir", cache, one])
            target = f"{base}/www/small/s000000.png"
            group("1 URL", [
                ("startup", "asyncfetch URL (fresh hit)", lambda: [binary, "--cache-dir", cache, one], None),
                ("startup", "curl -s -o /dev/null file://", lambda: ["curl", "-s", "-o", "/dev/null", f"file://{target}"], None),
            ], 30)
    finally:
        nginx.stop()

    def row(mode, setname, label_prefix):
        for m, s, r in results:
            if m == mode and s == setname and r.name.startswith(label_prefix):
                return r
        return None

    urls_in = {name: len(urls) for name, urls in sets.items()}
    urls_in["1 URL"] = 1
    large_mb = 20 * len(big) / 1e6
    # label, mode, set, reference (a label prefix in the same mode, or (mode, prefix)), wall target (issue 22), CPU target
    checks = [
        ("cold 1k vs curl p8", "cold", "1k", "curl --parallel-max 8", None, None),
        (f"cold {small_big} vs curl p8", "cold", small_big, "curl --parallel-max 8", 0.8, 1.2 if fs == "tmpfs" else None),
        (f"cold {small_big} vs curl p32", "cold", small_big, "curl --parallel-max 32", None, None),
        ("cold 20x10MiB vs curl p8", "cold", "20x10MiB", "curl --parallel-max 8", 1.0, None),
        (f"fresh {small_big} vs curl etag pass", "fresh", small_big, ("revalidate", "curl p8"), 0.1, None),
        (f"revalidate {small_big} vs curl etag pass", "revalidate", small_big, ("revalidate", "curl p8"), 0.7, None),
        (f"offline {small_big} vs md5+stat C loop", "offline", small_big, "C loop: ", 1.5, None),
        (f"offline {small_big} vs C loop with MD5()", "offline", small_big, "C loop, MD5()", None, None),
        ("one cached URL vs curl file://", "startup", "1 URL", "curl", 1.0, None),
    ]

    def us(seconds, per):
        v = seconds / per * 1e6
        return f"{v:7.1f}" if v < 1000 else f"{v:7.0f}"

    def cpu_cells(a, b, per):
        """asyncfetch's and the reference's CPU per unit in µs, median (min), and their ratio."""
        ma, mb = statistics.median(a.cpus), statistics.median(b.cpus)
        return (f"{us(ma, per)} ({us(min(a.cpus), per)})  {us(mb, per)} ({us(min(b.cpus), per)})  "
                f"{ma / mb:5.2f} ({min(a.cpus) / min(b.cpus):4.2f})")

    def verdict(name, ratio, target):
        return [] if target is None else [f"{name} ≤ {target:.2f} {'ok' if ratio <= target else 'MISSED'}"]

    lines = [f"Ratios on {fs}, median of {args.reps} (min in brackets). wall: asyncfetch / reference;",
             "CPU per URL: user+sys of the whole process / URLs, in µs, asyncfetch and the reference, and their ratio",
             f"{'':<40} {'wall ratio':^13} {'':>7}  {'wall, median':^20}    {'CPU per URL, µs: median (min)':^56}".rstrip(),
             f"{'case':<40} {'median (min)':>13} {'target':>7}  {'asyncfetch':>10} {'reference':>9}    "
             f"{'asyncfetch':>17}  {'reference':>17}  {'ratio':>12}"]
    for label, mode, setname, ref, target, cpu_target in checks:
        a = row(mode, setname, "asyncfetch")
        b = row(ref[0], setname, ref[1]) if isinstance(ref, tuple) else row(mode, setname, ref)
        if not a or not b:
            continue
        ratio = a.wall / b.wall
        marks = verdict("wall", ratio, target) + verdict("CPU ratio", statistics.median(a.cpus) / statistics.median(b.cpus), cpu_target)
        lines.append(f"{label:<40} {ratio:6.2f} ({min(a.walls) / min(b.walls):4.2f}) {('≤ %.2f' % target) if target else '':>7}  "
                     f"{fmt(a.wall):>10} {fmt(b.wall):>9}    {cpu_cells(a, b, urls_in[setname])}"
                     f"{'  ' + ', '.join(marks) if marks else ''}")
        if setname == "20x10MiB":
            lines.append(f"{'  the same, CPU per MB (not per URL)':<40} {'':>6} {'':>6} {'':>7}  {'':>10} {'':>9}    "
                         f"{cpu_cells(a, b, large_mb)}")
    worst = max((max(r.rss), r.name, m, s) for m, s, r in results if r.name.startswith("asyncfetch"))
    lines.append(f"{'asyncfetch peak RSS, worst case':<40} {worst[0]:6.1f} MiB (≤ 30)  [{worst[2]} {worst[3]}: {worst[1]}]")
    shutil.rmtree(base, ignore_errors=True)
    table = "\n".join(lines)
    print("\n" + table, flush=True)
    return table


def run_remote(args, fs, base):
    """The remote cache tier (--remote-cache, issue 17): a 10,000-URL list
    cold from the origin (no tier), cold with the uploads to the tier, and
    warm from the tier into an empty local cache (zero origin requests).
    Origin and tier are two nginx on 127.0.0.1 (the tier with dav_methods PUT)."""
    binary = os.path.abspath(args.bin)
    base += "-remote"    # its own folder: other cases (or another bench run) clear theirs
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(f"{base}/www/small")
    variants = [png(64, 64, seed) for seed in range(16)]
    # Dated 30 days back, as in `run`: nginx's Last-Modified then keeps them fresh for 3 days
    # (RFC 9111 §4.2.2), so the warm run is answered by the tier, not revalidated with the origin.
    old = time.time() - 30 * 86400
    for i in range(args.small):
        with open(f"{base}/www/small/s{i:06d}.png", "wb") as f:
            f.write(variants[i % len(variants)])
        os.utime(f"{base}/www/small/s{i:06d}.png", (old, old))
    store = f"{base}/store"
    os.makedirs(store); os.chmod(store, 0o777)      # nginx's workers (nobody) write here
    origin = Nginx(f"{base}/www", f"{base}/nginx")
    tier = Nginx(store, f"{base}/nginx-tier",
                 extra="open_file_cache off; "   # 20,000 objects would hold 20,000 descriptors and stop accept()
                       "location /cache/ { dav_methods PUT DELETE; create_full_put_path on; client_max_body_size 0; }")
    listing = f"{base}/urls.txt"
    with open(listing, "w") as f:
        f.write("".join(f"http://127.0.0.1:{origin.port}/small/s{i:06d}.png\n" for i in range(args.small)))
    # A new prefix each repetition: deleting objects under nginx's open_file_cache would keep serving them.
    cache = f"{base}/cache"
    name = count_name(args.small)

    def fresh(path):
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)

    rows = {label: Row(label) for label in ("cold, origin only", "cold + uploads to the tier", "warm from the tier")}
    uploaded = []   # objects in the tier after each cold run with uploads
    print(f"\nremote cache tier on {fs}: {args.small} URLs, origin nginx :{origin.port}, tier nginx WebDAV :{tier.port}; "
          f"median of {args.reps}", flush=True)
    try:
        for rep in range(args.reps):
            remote = f"http://127.0.0.1:{tier.port}/cache/r{rep}/"
            fresh(cache)
            rows["cold, origin only"].add(measure([binary, "--cache-dir", cache, "--input", listing]))
            fresh(cache)
            rows["cold + uploads to the tier"].add(measure([binary, "--cache-dir", cache, "--remote-cache", remote,
                                                             "--input", listing]))
            uploaded.append(len(os.listdir(f"{store}/cache/r{rep}")))
            fresh(cache)
            rows["warm from the tier"].add(measure([binary, "--cache-dir", cache, "--remote-cache", remote,
                                                     "--input", listing]))
    finally:
        origin.stop(); tier.stop()
    lines = [f"Remote cache tier on {fs}, {name} URLs (median wall, min in brackets; CPU; ratio to the cold origin run)"]
    base_row = rows["cold, origin only"]
    for label, row in rows.items():
        lines.append(f"{label:<30} {fmt(row.wall):>10} ({fmt(min(row.walls)):>9})  cpu {fmt(statistics.median(row.cpus)):>9}"
                     f"  rss {max(row.rss):5.1f} MiB  exit {sorted(set(row.codes))}  ratio {row.wall / base_row.wall:5.2f}")
    lines.append(f"objects in the tier after each cold run with uploads: {uploaded} (of {args.small})")
    shutil.rmtree(base, ignore_errors=True)
    table = "\n".join(lines)
    print("\n" + table, flush=True)
    return table


def run_decode(args, fs, base):
    """The cost of --decode (issue 23 item 5): cold runs into an empty cache
    of the small set (`--small` PNGs of 64×64 noise, ~12.4 KB) and of
    20 × 10 MiB PNGs (1870×1870 noise), without and with --decode, the two
    alternating; median of `--reps`, and the ratio of the medians."""
    binary = os.path.abspath(args.bin)
    base += "-decode"
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(f"{base}/www/small"); os.makedirs(f"{base}/www/large")
    variants = [png(64, 64, seed) for seed in range(16)]
    for i in range(args.small):
        with open(f"{base}/www/small/s{i:06d}.png", "wb") as f:
            f.write(variants[i % len(variants)])
    big = png(1870, 1870, 99)
    for i in range(20):
        with open(f"{base}/www/large/l{i:02d}.png", "wb") as f:
            f.write(big)
    nginx = Nginx(f"{base}/www", f"{base}/nginx")
    url = f"http://127.0.0.1:{nginx.port}"
    sets = {count_name(args.small): [f"{url}/small/s{i:06d}.png" for i in range(args.small)],
            "20x10MiB": [f"{url}/large/l{i:02d}.png" for i in range(20)]}
    cache = f"{base}/cache"
    lines = [f"--decode on {fs} (cold, empty cache; median wall, min in brackets; CPU; ratio of the medians)"]
    print(f"\n--decode on {fs}: nginx :{nginx.port}; median of {args.reps}", flush=True)
    try:
        for name, urls in sets.items():
            listing = f"{base}/{name}.txt"
            with open(listing, "w") as f:
                f.write("\n".join(urls) + "\n")
            rows = {label: Row(label) for label in ("structure check", "--decode")}
            for _ in range(args.reps):
                for label, extra in (("structure check", []), ("--decode", ["--decode"])):
                    shutil.rmtree(cache, ignore_errors=True)
                    rows[label].add(measure([binary, "--cache-dir", cache, *extra, "--input", listing]))
            plain, decoded = rows["structure check"], rows["--decode"]
            for row in (plain, decoded):
                lines.append(f"{name:<9} {row.name:<16} {fmt(row.wall):>10} ({fmt(min(row.walls)):>9})"
                             f"  cpu {fmt(statistics.median(row.cpus)):>9}  rss {max(row.rss):6.1f} MiB  exit {sorted(row.codes)}")
            extra_cpu = statistics.median(decoded.cpus) - statistics.median(plain.cpus)
            megabytes = sum(os.path.getsize(f"{base}/www/{'small' if name != '20x10MiB' else 'large'}/{u.rsplit('/', 1)[1]}")
                            for u in urls) / 1e6
            lines.append(f"{name:<9} ratio wall {decoded.wall / plain.wall:5.2f}, cpu "
                         f"{statistics.median(decoded.cpus) / statistics.median(plain.cpus):5.2f}; extra CPU "
                         f"{extra_cpu / len(urls) * 1e3:.2f} ms per image, {extra_cpu / megabytes * 1e3:.1f} ms per MB")
            print(lines[-3] + "\n" + lines[-2] + "\n" + lines[-1], flush=True)
    finally:
        nginx.stop()
    shutil.rmtree(base, ignore_errors=True)
    return "\n".join(lines)


if __name__ == "__main__":
    main()
