#!/usr/bin/env python3
"""make bench's internet-like case (issue 21): thousands of image URLs over
hundreds of simulated hosts with round trips of 20-200 ms, a connection
limit per host answered with 429, and the failures of the real internet
(dead hosts, black holes, slow hosts, names that do not resolve, 404s,
500-then-200, redirects, HTML pages where an image was expected).

Everything runs in a network namespace made here (`ip netns add`, lo up,
/etc/netns/NAME/hosts mapping every name to its own 127.x.y.z): the origin
simulator (bench/origin.py) plays every host on one port, and each tool
runs inside the namespace with the same timeouts and retries (connect
timeout 5 s, 10 s per attempt, 2 retries). Each run is verified by bytes
against the expected results the preset generator wrote, and the
simulator's per-host counters give the 429s drawn and the most connections
to one host. The namespace, /etc/netns/NAME and every process started are
removed in a `finally`. Deterministic from --seed. Needs root (ip netns).
"""
import argparse, hashlib, json, math, os, random, shutil, signal, socket, struct, subprocess, sys, threading, time, zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VENV = os.path.join(ROOT, ".build", "bench-venv")
VENV_PACKAGES = ["img2dataset==1.47.0", "uvloop==0.23.0", "h2==4.4.1"]

CONNECT_TIMEOUT, ATTEMPT_TIMEOUT, RETRIES = 5, 10, 2
PER_HOST_LIMIT = 6          # the per-host limit the polite floor assumes (browsers' 6)
SLOW_THINK, SLOW_BANDWIDTH = 3.0, 64 * 1024     # as in origin.py

# urls, hosts, Zipf exponent of URLs over hosts; HTTPS variant's urls and hosts
PRESETS = {
    "small": dict(urls=500, hosts=50, zipf=1.0, tls_urls=200, tls_hosts=20),
    "issue": dict(urls=5000, hosts=502, zipf=0.97, tls_urls=1000, tls_hosts=100),
    "huge": dict(urls=100_000, hosts=10_000, zipf=0.9, tls_urls=10_000, tls_hosts=1000),
}
HOST_MIX = [("dead", 0.01), ("blackhole", 0.01), ("slow", 0.01), ("nxdomain", 0.02)]
URL_MIX = [("404", 0.03), ("flaky", 0.03), ("redirect", 0.02), ("html", 0.01)]
CONN_LIMIT = 8               # connections per host the origins allow; more get 429 + Retry-After: 1
MEDIAN_RTT_MS, MIN_RTT_MS, MAX_RTT_MS, BUSIEST_RTT_MS = 60, 20, 200, 130


# --- the preset generator ----------------------------------------------------

def png(width, height, seed):
    """A real PNG of noise (incompressible, so the size is predictable)."""
    rnd = random.Random(seed)
    raw = b"".join(b"\x00" + rnd.randbytes(width * 3) for _ in range(height))

    def chunk(kind, data):
        c = struct.pack(">I", len(data)) + kind + data
        return c + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 0)) + chunk(b"IEND", b"")


def make_images(folder, seed):
    """A pool of real, varied images: noise PNGs of 5-75 KB and, when
    ImageMagick is there, plasma JPEGs of 5-60 KB. Returns their file names."""
    os.makedirs(folder, exist_ok=True)
    rnd = random.Random(seed)
    names = []
    for i in range(24):
        w, h = rnd.randint(40, 160), rnd.randint(40, 160)
        name = f"p{i:02d}-{w}x{h}.png"
        with open(f"{folder}/{name}", "wb") as f:
            f.write(png(w, h, seed * 1000 + i))
        names.append(name)
    convert = shutil.which("convert")
    for i in range(24 if convert else 0):
        w, h = rnd.randint(120, 480), rnd.randint(120, 480)
        name = f"j{i:02d}-{w}x{h}.jpg"
        r = subprocess.run([convert, "-seed", str(seed * 1000 + i), "-size", f"{w}x{h}", "plasma:fractal",
                            "-quality", "85", f"{folder}/{name}"], capture_output=True)
        if r.returncode == 0 and os.path.getsize(f"{folder}/{name}") > 0:
            names.append(name)
    return names


def host_ip(i):
    return f"127.{16 + (i >> 8)}.{i & 255}.1"


def generate(folder, urls, hosts, zipf, seed, tls):
    """Writes world.json (for origin.py), urls.txt, hosts and expected.json
    under `folder`; returns the world and the expectations."""
    rnd = random.Random(seed)
    images = make_images(f"{folder}/images", seed)
    blobs = [open(f"{folder}/images/{n}", "rb").read() for n in images]
    scheme = "https" if tls else "http"
    prefixes = ["img", "cdn", "static", "media", "photos", "assets", "pics", "upload"]
    world_hosts = []
    for i in range(hosts):
        rtt = min(MAX_RTT_MS, max(MIN_RTT_MS, round(rnd.lognormvariate(math.log(MEDIAN_RTT_MS), 0.6))))
        world_hosts.append(dict(name=f"{rnd.choice(prefixes)}-{i:05d}.example.test", ip=host_ip(i), rtt_ms=rtt,
                                bw=int(2 ** rnd.uniform(math.log2(2e6), math.log2(16e6))), limit=CONN_LIMIT,
                                kind="ok", paths={}))
    # URLs over hosts: Zipf by rank, every host at least one; the busiest host has the 130 ms.
    weights = [1 / (r + 1) ** zipf for r in range(hosts)]
    total = sum(weights)
    counts = [max(1, int(urls * w / total)) for w in weights]
    r = 0
    while sum(counts) < urls:
        counts[r % hosts] += 1; r += 1
    while sum(counts) > urls:
        j = max(range(hosts), key=lambda k: counts[k]); counts[j] -= 1
    world_hosts[0]["rtt_ms"] = BUSIEST_RTT_MS
    # Failing hosts: drawn from outside the busiest tenth (a black hole among the top hosts would be the whole run).
    pool = list(range(max(1, hosts // 10), hosts))
    rnd.shuffle(pool)
    for kind, share in HOST_MIX:
        for _ in range(max(1, round(hosts * share))):
            world_hosts[pool.pop()]["kind"] = kind
    expected, lines = {}, []
    for i, h in enumerate(world_hosts):
        for _ in range(counts[i]):
            img = rnd.randrange(len(images))
            ext = images[img].rsplit(".", 1)[1]
            while True:
                path = f"/{rnd.choice(['photos', 'img', 'i', 'media/2026'])}/{rnd.getrandbits(48):012x}.{ext}"
                if path not in h["paths"]:
                    break
            x = rnd.random()
            kind = "img"
            for k, share in URL_MIX:
                if x < share:
                    kind = k
                    break
                x -= share
            if kind == "img" or kind == "flaky":
                h["paths"][path] = [kind, img]
            elif kind == "redirect":
                target = f"/r/{rnd.getrandbits(48):012x}.{ext}"
                h["paths"][target] = ["img", img]
                h["paths"][path] = ["redirect", f"{scheme}://{h['name']}{target}"]
            elif kind == "html":
                h["paths"][path] = ["html", rnd.randrange(1000)]
            else:
                h["paths"][path] = ["404"]
            url = f"{scheme}://{h['name']}{path}"
            obtainable = h["kind"] in ("ok", "slow") and kind in ("img", "flaky", "redirect")
            expected[url] = dict(kind=kind, host=h["kind"], digest=hashlib.sha256(blobs[img]).hexdigest() if obtainable else None)
            lines.append(url)
    rnd.shuffle(lines)
    world = dict(hosts=world_hosts, images=images, tls=tls)
    with open(f"{folder}/world.json", "w") as f:
        json.dump(world, f)
    with open(f"{folder}/urls.txt", "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(f"{folder}/hosts", "w") as f:
        f.write("127.0.0.1 localhost\n" + "".join(f"{h['ip']} {h['name']}\n" for h in world_hosts if h["kind"] != "nxdomain"))
    with open(f"{folder}/expected.json", "w") as f:
        json.dump(expected, f)
    sizes = {}
    for h in world_hosts:
        for a in h["paths"].values():
            if a[0] in ("img", "flaky"):
                sizes.setdefault(h["name"], []).append(len(blobs[a[1]]))
    return world, expected, sizes


def polite_floor(world, sizes, tls):
    """The larger of: the busiest host's requests at PER_HOST_LIMIT
    connections, one round trip (plus its body at the host's bandwidth)
    each, after one connection set-up; and one timeout for a black-hole host
    (the per-attempt timeout; over TLS the connect timeout, as the handshake
    never completes). Returns (seconds, description)."""
    best, label = 0.0, ""
    for h in world["hosts"]:
        if h["kind"] not in ("ok", "slow"):
            continue
        reqs = sum({"redirect": 2, "flaky": 2}.get(a[0], 1) for p, a in h["paths"].items() if not p.startswith("/r/"))
        rtt = h["rtt_ms"] / 1000
        bw = SLOW_BANDWIDTH if h["kind"] == "slow" else h["bw"]
        body = sum(sizes.get(h["name"], [0])) / max(1, len(sizes.get(h["name"], [0])))
        per = rtt + body / bw + (SLOW_THINK if h["kind"] == "slow" else 0)
        t = (3 if tls else 1) * rtt + math.ceil(reqs / PER_HOST_LIMIT) * per
        if t > best:
            best, label = t, f"{h['name']} ({h['kind']}): {reqs} requests at {h['rtt_ms']} ms"
    holes = any(h["kind"] == "blackhole" for h in world["hosts"])
    hole = (CONNECT_TIMEOUT if tls else ATTEMPT_TIMEOUT) if holes else 0
    if hole > best:
        return hole, f"one {'connect ' if tls else ''}timeout for a black-hole host ({hole} s)"
    return best, label + f" (black hole: {hole} s)"


# --- the namespace and the simulator ---------------------------------------

def venv():
    """The bench's venv (img2dataset, uvloop, h2), made on first use."""
    py = f"{VENV}/bin/python3"
    stamp = f"{VENV}/.installed"
    if os.path.exists(stamp) and open(stamp).read() == " ".join(VENV_PACKAGES):
        return py
    print(f"internet: installing {' '.join(VENV_PACKAGES)} into {VENV}", flush=True)
    if not os.path.exists(py):
        subprocess.run(["/usr/bin/python3", "-m", "venv", VENV], check=True)
    subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", *VENV_PACKAGES], check=True)
    with open(stamp, "w") as f:
        f.write(" ".join(VENV_PACKAGES))
    return py


class Namespace:
    def __init__(self):
        self.name = f"afbench{os.getpid()}"
        self.etc = f"/etc/netns/{self.name}"

    def __enter__(self):
        subprocess.run(["ip", "netns", "add", self.name], check=True)
        try:
            subprocess.run(["ip", "-n", self.name, "link", "set", "lo", "up"], check=True)
            os.makedirs(self.etc)
            with open(f"{self.etc}/resolv.conf", "w") as f:
                f.write("nameserver 127.0.0.53\noptions timeout:1 attempts:1\n")
            nss = open("/etc/nsswitch.conf").read().splitlines() if os.path.exists("/etc/nsswitch.conf") else []
            nss = [line for line in nss if not line.startswith("hosts:")] + ["hosts: files dns"]
            with open(f"{self.etc}/nsswitch.conf", "w") as f:
                f.write("\n".join(nss) + "\n")
        except BaseException:
            self.__exit__()
            raise
        return self

    def hosts(self, path):
        shutil.copyfile(path, f"{self.etc}/hosts")

    def __exit__(self, *exc):
        subprocess.run(["ip", "netns", "delete", self.name], stderr=subprocess.DEVNULL)
        shutil.rmtree(self.etc, ignore_errors=True)

    def cmd(self, argv):
        return ["ip", "netns", "exec", self.name, *argv]


class Origin:
    """origin.py inside the namespace; dump/reset over its Unix socket."""

    def __init__(self, ns, py, folder, tls, certs, dns=True):
        self.control = f"{folder}/control.sock"
        argv = [py, f"{HERE}/origin.py", "--world", f"{folder}/world.json", "--images", f"{folder}/images",
                "--control", self.control, "--counters", f"{folder}/counters-final.json"]
        if tls:
            argv += ["--tls", "--cert", certs["cert"], "--key", certs["key"]]
        if not dns:
            argv += ["--no-dns"]
        self.log = open(f"{folder}/origin.log", "w")
        self.proc = subprocess.Popen(ns.cmd(argv), stdout=self.log, stderr=self.log, start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit("origin.py exited: " + open(f"{folder}/origin.log").read())
            try:
                if self.ask("ping") == "pong":
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise SystemExit("origin.py did not start in 120 s")

    def ask(self, cmd):
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(30)
            s.connect(self.control)
            s.sendall(cmd.encode() + b"\n")
            buf = b""
            while not buf.endswith(b"\n"):
                part = s.recv(1 << 20)
                if not part:
                    break
                buf += part
        return buf.decode().strip()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()


def make_ca(folder):
    """A private CA and a wildcard certificate for *.example.test (ECDSA P-256)."""
    os.makedirs(folder, exist_ok=True)
    run = lambda *a: subprocess.run(["openssl", *a], check=True, capture_output=True)
    run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "30",
        "-subj", "/CN=asyncfetch bench private CA", "-keyout", f"{folder}/ca.key", "-out", f"{folder}/ca.pem")
    run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=*.example.test",
        "-keyout", f"{folder}/key.pem", "-out", f"{folder}/req.csr")
    with open(f"{folder}/ext.cnf", "w") as f:
        f.write("subjectAltName=DNS:*.example.test\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\n"
                "extendedKeyUsage=serverAuth\n")
    run("x509", "-req", "-in", f"{folder}/req.csr", "-CA", f"{folder}/ca.pem", "-CAkey", f"{folder}/ca.key",
        "-CAcreateserial", "-days", "30", "-extfile", f"{folder}/ext.cnf", "-out", f"{folder}/cert.pem")
    return dict(ca=f"{folder}/ca.pem", cert=f"{folder}/cert.pem", key=f"{folder}/key.pem")


# --- running and verifying the tools ------------------------------------------

def tree_rss(root):
    """Sum of VmRSS (KiB) of `root` and its descendants."""
    parent, rss = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read()
            fields = st[st.rindex(")") + 2:].split()
            parent[int(d)] = int(fields[1])
            rss[int(d)] = int(fields[21]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
        except (OSError, ValueError, IndexError):
            continue
    total, stack, seen = 0, [root], set()
    children = {}
    for p, pp in parent.items():
        children.setdefault(pp, []).append(p)
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        total += rss.get(p, 0)
        stack.extend(children.get(p, []))
    return total


def measure(ns, argv, folder, limit, env=None):
    """Runs argv in the namespace under GNU time; returns dict(wall, cpu
    (user + sys, s), user, sys, rss (largest process, MiB), tree (peak summed RSS of the process tree,
    MiB), code, timed_out). Killed (its process group) after `limit` s."""
    rssfile = f"{folder}/time-rss"
    out = open(f"{folder}/stdout", "w"); err = open(f"{folder}/stderr", "w")
    start = time.perf_counter()
    proc = subprocess.Popen(ns.cmd(["/usr/bin/time", "-f", "%M", "-o", rssfile, *argv]), stdout=out, stderr=err,
                            stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    peak, stop, timed_out = [0], threading.Event(), [False]

    def sample():
        while not stop.wait(0.5):
            peak[0] = max(peak[0], tree_rss(proc.pid))
            if time.perf_counter() - start > limit and not timed_out[0]:
                timed_out[0] = True
                os.killpg(proc.pid, signal.SIGKILL)
    t = threading.Thread(target=sample, daemon=True)
    t.start()
    try:
        _, status, ru = os.wait4(proc.pid, 0)
    except BaseException:          # Ctrl-C of the bench: the tool (its own session) goes too
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    wall = time.perf_counter() - start
    stop.set(); t.join()
    out.close(); err.close()
    try:
        rss = int(open(rssfile).read().split()[-1]) / 1024.0
    except (OSError, ValueError, IndexError):
        rss = float("nan")
    return dict(wall=wall, cpu=ru.ru_utime + ru.ru_stime, user=ru.ru_utime, sys=ru.ru_stime, rss=rss, tree=peak[0] / 1024.0,
                code=os.waitstatus_to_exitcode(status), timed_out=timed_out[0])


def digest(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    return hashlib.sha256(data).hexdigest() if data else None


def stored_asyncfetch(folder, urls):
    got = {}
    with open(f"{folder}/stdout") as f:
        for line in f:
            try:
                o = json.loads(line)
            except ValueError:
                continue
            if o.get("phase") == "success" and "path" in o:
                got[o["url"]] = digest(o["path"])
    return got


def stored_by_index(out, urls):
    return {u: digest(f"{out}/{i:06d}") for i, u in enumerate(urls) if os.path.exists(f"{out}/{i:06d}")}


def stored_img2dataset(out, urls):
    got = {}
    for dirpath, _, files in os.walk(out):
        names = set(files)
        for name in files:
            if not name.endswith(".json") or name.endswith("_stats.json"):
                continue
            try:
                meta = json.load(open(f"{dirpath}/{name}"))
            except (OSError, ValueError):
                continue
            stem = name[:-5]
            for other in names:
                if other.startswith(stem + ".") and not other.endswith((".json", ".txt")):
                    got[meta.get("url")] = digest(f"{dirpath}/{other}")
    return got


def score(got, expected):
    ok = sum(1 for u, e in expected.items() if e["digest"] and got.get(u) == e["digest"])
    junk = sum(1 for u, d in got.items() if d and (u not in expected or expected[u]["digest"] != d))
    html = sum(1 for u, d in got.items() if d and u in expected and expected[u]["kind"] in ("html", "404"))
    return ok, junk, html


def asyncfetch_argv(args, folder, tls, certs, *extra):
    """asyncfetch on `folder`'s list with the case's timeouts and retries (`--cacert` over TLS), and `extra`."""
    return [os.path.abspath(args.bin), "--cache-dir", f"{folder}/cache", "--input", f"{folder}/urls.txt", "--json",
            "--no-progress", "--connect-timeout", str(CONNECT_TIMEOUT), "--timeout", str(ATTEMPT_TIMEOUT),
            "--retries", str(RETRIES), *(["--cacert", certs["ca"]] if tls else []), *extra]


def run_case(args, ns, folder, tls, generated, certs, defaults_only=False):
    """Runs every tool (with `defaults_only`, asyncfetch's defaults alone) against the running
    simulator; returns (the table, the asyncfetch defaults row)."""
    world, expected, sizes = generated
    hosts_n = len(world["hosts"])
    urls = open(f"{folder}/urls.txt").read().split()
    obtainable = sum(1 for e in expected.values() if e["digest"])
    floor, floor_why = polite_floor(world, sizes, tls)
    kinds = {}
    for h in world["hosts"]:
        kinds[h["kind"]] = kinds.get(h["kind"], 0) + 1
    ukinds = {}
    for e in expected.values():
        ukinds[e["kind"]] = ukinds.get(e["kind"], 0) + 1
    busiest = max(world["hosts"], key=lambda h: len(h["paths"]))
    title = (f"{'HTTPS + HTTP/2' if tls else 'HTTP/1.1'}{' (the HTTPS list over plain HTTP)' if defaults_only else ''}: "
             f"{len(urls)} URLs over {hosts_n} hosts "
             f"(hosts {kinds}; URLs {ukinds}); {obtainable} obtainable; {CONN_LIMIT} connections per host allowed; "
             f"RTT {MIN_RTT_MS}-{MAX_RTT_MS} ms, median {MEDIAN_RTT_MS}; busiest host {busiest['name']} "
             f"({len(busiest['paths'])} paths, {busiest['rtt_ms']} ms)")
    print("\n" + title, flush=True)
    scheme_args = {"curl": ["--cacert", certs["ca"]] if tls else [],
                   "aria2c": [f"--ca-certificate={certs['ca']}"] if tls else []}
    # albumentations (an img2dataset dependency) looks up its latest version online unless told not to
    env = dict(os.environ, NO_ALBUMENTATIONS_UPDATE="1", **({"SSL_CERT_FILE": certs["ca"]} if tls else {}))
    out = f"{folder}/out"
    cfg = f"{folder}/curl.cfg"
    with open(cfg, "w") as f:
        f.write("".join(f'url = "{u}"\noutput = "{out}/{i:06d}"\n' for i, u in enumerate(urls)))
    aria_in = f"{folder}/aria2.txt"
    with open(aria_in, "w") as f:
        f.write("".join(f"{u}\n  out={i:06d}\n" for i, u in enumerate(urls)))

    def af(*extra):
        return ("asyncfetch", asyncfetch_argv(args, folder, tls, certs, *extra))

    # Defaults: --jobs 64, --jobs-per-host 6. The per-host limit is what protects a server now, so
    # --jobs 256 should draw no 429s either; --jobs-per-host 8 meets the preset's own limit.
    runs = [("asyncfetch, defaults", af()), ("asyncfetch --jobs-per-host 8", af("--jobs-per-host", "8"))]
    if not tls:
        runs.append(("asyncfetch --jobs 256", af("--jobs", "256")))
    runs += [
        ("curl --parallel-max 64", ("index", ["curl", "-s", "--no-progress-meter", "-L", "-f", "--parallel", "--parallel-max", "64",
                                              "--connect-timeout", str(CONNECT_TIMEOUT), "-m", str(ATTEMPT_TIMEOUT),
                                              "--retry", str(RETRIES), "--retry-connrefused", *scheme_args["curl"],
                                              "-K", cfg])),
        ("aria2c -j 64", ("index", ["aria2c", "-q", "-j", "64", "--async-dns=false", "-i", aria_in, "-d", out,
                                    f"--connect-timeout={CONNECT_TIMEOUT}", f"--timeout={ATTEMPT_TIMEOUT}",
                                    f"--max-tries={RETRIES + 1}", "--retry-wait=1", "--auto-file-renaming=false",
                                    "--allow-overwrite=true", "--file-allocation=none", "--console-log-level=error",
                                    "--summary-interval=0", *scheme_args["aria2c"]])),
    ]
    threads = args.img2dataset_threads if not tls else args.img2dataset_threads[-1:]
    # One shard per process: a shard ends with its slowest URL (a black hole's 3 × 10 s), so smaller
    # shards queue those waits one after another.
    shard = math.ceil(len(urls) / 2)
    for t in threads:
        runs.append((f"img2dataset 2 proc x {t} threads", ("img2dataset", [
            f"{VENV}/bin/img2dataset", "--url_list", f"{folder}/urls.txt", "--input_format", "txt",
            "--output_folder", out, "--output_format", "files", "--processes_count", "2", "--thread_count", str(t),
            "--timeout", str(ATTEMPT_TIMEOUT), "--retries", str(RETRIES), "--disable_all_reencoding", "True",
            "--resize_mode", "no", "--number_sample_per_shard", str(shard), "--enable_wandb", "False",
            "--disallowed_header_directives", "[]"])))
    if args.tools:
        runs = [r for r in runs if any(r[0].startswith(t) for t in args.tools)]
    if defaults_only:
        runs = [r for r in runs if r[0] == "asyncfetch, defaults"]
    rows = []
    for label, (kind, argv) in runs:
        for p in (out, f"{folder}/cache"):
            shutil.rmtree(p, ignore_errors=True)
        os.makedirs(out)
        origin_reset(args)
        m = measure(ns, argv, folder, args.run_limit, env=env)
        counters = json.loads(args.origin.ask("dump"))["hosts"]
        if kind == "asyncfetch":
            got = stored_asyncfetch(folder, urls)
        elif kind == "index":
            got = stored_by_index(out, urls)
        else:
            got = stored_img2dataset(out, urls)
        ok, junk, html = score(got, expected)
        n429 = sum(h["429"] for h in counters)
        most = max(counters, key=lambda h: h["most"])
        conns = sum(h["connections"] for h in counters)
        reqs = sum(h["requests"] for h in counters)
        resumed = sum(h.get("resumed", 0) for h in counters)
        row = dict(label=label, ok=ok, junk=junk, html=html, n429=n429, most=most["most"], conns=conns, reqs=reqs, **m)
        rows.append(row)
        print(f"  {label:<34} wall {m['wall']:7.1f} s  cpu {m['cpu']:6.2f} s  images {ok}/{obtainable}  "
              f"429s {n429}  most conns {most['most']} ({most['name']})  connections {conns}"
              f"{f' ({resumed} TLS resumed)' if tls else ''}  requests {reqs}  "
              f"rss {m['rss']:.0f} MiB (tree {m['tree']:.0f})  junk {junk}  exit {m['code']}"
              f"{'  TIMED OUT' if m['timed_out'] else ''}", flush=True)
        if args.trace:
            print("\n".join(trace_summary(json.loads(args.origin.ask("trace")))), flush=True)
            again = sorted((h for h in counters if h["connections"] > 1), key=lambda h: -h["connections"])
            print(f"  hosts with more than one connection: {len(again)} "
                  "(" + ", ".join(f"{h['name']} ({h['kind']}) {h['connections']}" for h in again[:12]) + ")", flush=True)
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(f"{folder}/cache", ignore_errors=True)
    lines = [title, f"polite floor {floor:.1f} s: {floor_why}", "",
             "| run | wall | images / obtainable | 429s drawn | most connections to one host | connections | memory | junk stored | CPU |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        mem = f"{r['rss']:.0f} MB" + (f" ({r['tree']:.0f} MB all processes)" if r["tree"] > r["rss"] * 1.3 else "")
        junk = f"{r['junk']}" + (f" ({r['html']} HTML/404 pages)" if r["html"] else "")
        lines.append(f"| {r['label']} | {r['wall']:.1f} s{' (killed)' if r['timed_out'] else ''} | {r['ok']:,} / {obtainable:,} "
                     f"| {r['n429']:,} | {r['most']} | {r['conns']:,} | {mem} | {junk} | {r['cpu']:.1f} s |")
    defaults = next((r for r in rows if r["label"] == "asyncfetch, defaults"), None)
    imgs = [r for r in rows if r["label"].startswith("img2dataset")]
    if defaults:
        lines.append("")
        mark = lambda ok: "ok" if ok else "MISSED"
        lines.append(f"asyncfetch defaults: images {defaults['ok']}/{obtainable} ({mark(defaults['ok'] == obtainable)}), "
                     f"junk {defaults['junk']} ({mark(defaults['junk'] == 0)}), 429s {defaults['n429']} "
                     f"({mark(defaults['n429'] == 0)}), peak RSS {defaults['rss']:.0f} MB (≤ 64: {mark(defaults['rss'] <= 64)})")
        ratio = defaults["wall"] / floor if floor else float("nan")
        lines.append(f"asyncfetch defaults wall / polite floor: {defaults['wall']:.1f} / {floor:.1f} = {ratio:.2f} "
                     f"(≤ 1.3: {mark(ratio <= 1.3)})")
        if imgs:
            best = min(imgs, key=lambda r: r["wall"])
            ratio = defaults["wall"] / best["wall"]
            lines.append(f"asyncfetch defaults wall / img2dataset best ({best['label']}): {defaults['wall']:.1f} / "
                         f"{best['wall']:.1f} = {ratio:.2f} (≤ 0.5: {mark(ratio <= 0.5)})")
        lines.append(f"asyncfetch defaults CPU per URL: {defaults['cpu'] / len(urls) * 1000:.2f} ms")
    return "\n".join(lines), defaults


def trace_summary(trace, top=3, step=2.0):
    """What origin.py's trace says about one run: per `step` seconds the
    requests in flight over all hosts (mean) and the connections open; and
    for the `top` hosts by requests, how busy they were between their first
    request and their last answer (mean requests in flight), how many
    connections they opened, and when they ended. Lines of text."""
    names, events = trace["names"], trace["events"]
    if not events:
        return ["  trace: no events"]
    end = max(e[0] for e in events)
    slots = int(end / step) + 1
    flight_area = [0.0] * slots              # request-seconds in flight per slot, all hosts
    conns_at = [0] * slots                   # connections open at each slot's start
    hosts = {}
    busy = {}                                # connection -> requests in flight on it (HTTP/2: several)
    flight = opened = 0
    last = 0.0

    def add_area(t0, t1, n):
        while t0 < t1:
            i = int(t0 / step)
            edge = min(t1, (i + 1) * step)
            flight_area[min(i, slots - 1)] += n * (edge - t0)
            t0 = edge
    conn_last = {}                           # connection -> time of its opening or last answer
    open_on = {}                             # host -> its connections open now
    closed_at = {}                           # host -> (time, idle before) of its last connection's close
    reopened = []                            # (seconds since the host's last connection closed, idle before that close)
    for t, h, code, cid in sorted(events, key=lambda e: e[0]):
        if code == "c":
            if not open_on.get(h) and h in closed_at:
                reopened.append((t - closed_at[h][0], closed_at[h][1]))
            open_on[h] = open_on.get(h, 0) + 1
            conn_last[cid] = t
        elif code == "x":
            open_on[h] = open_on.get(h, 0) - 1
            closed_at[h] = (t, t - conn_last.pop(cid, t))
        elif code == "r":
            conn_last[cid] = t
        add_area(last, t, flight)
        for i in range(int(last / step) + 1, int(t / step) + 1):
            conns_at[min(i, slots - 1)] = opened
        last = t
        st = hosts.setdefault(h, dict(requests=0, conns=0, first=None, end=0.0, area=0.0, flight=0, since=t,
                                      on_new=0, seen=set()))
        st["area"] += st["flight"] * (t - st["since"])
        st["since"] = t
        if code == "c":
            opened += 1
            st["conns"] += 1
        elif code == "x":
            opened -= 1
            n = busy.pop(cid, 0)
            flight -= n
            st["flight"] -= n
        elif code == "q":
            busy[cid] = busy.get(cid, 0) + 1
            flight += 1
            st["flight"] += 1
            st["requests"] += 1
            if cid not in st["seen"]:
                st["seen"].add(cid)
                st["on_new"] += 1
            if st["first"] is None:
                st["first"] = t
        elif code == "r":
            if busy.get(cid, 0) > 0:
                busy[cid] -= 1
                flight -= 1
                st["flight"] -= 1
            st["end"] = t
    lines = [f"  trace: last event at {end:.1f} s; requests in flight (mean per {step:g} s) / connections open:"]
    series = [f"{flight_area[i] / step:.0f}/{conns_at[i]}" for i in range(slots)]
    for i in range(0, len(series), 15):
        lines.append(f"    {i * step:5.0f} s: " + " ".join(series[i:i + 15]))
    if reopened:
        idle = [g for g, before in reopened if before >= 14.5]
        busy_close = sorted(g for g, before in reopened if before < 14.5)
        line = (f"  hosts that opened a connection after their last one closed: {len(reopened)}; "
                f"{len(idle)} after an idle close (15 s, the origin's)")
        if busy_close:
            idled = sorted(before for _, before in reopened if before < 14.5)
            quartiles = " / ".join(f"{idled[len(idled) * q // 4]:.2f}" for q in (1, 2, 3))
            line += (f", {len(busy_close)} after a close by the client (reopened after a median "
                     f"{busy_close[len(busy_close) // 2]:.2f} s, {sum(g < 1 for g in busy_close)} within 1 s; "
                     f"the closed connection had been idle {quartiles} s, quartiles)")
        lines.append(line)
    for h, st in sorted(hosts.items(), key=lambda kv: -kv[1]["requests"])[:top]:
        if st["first"] is None:
            continue
        span = max(1e-9, st["end"] - st["first"])
        lines.append(f"  {names[h]}: {st['requests']} requests, {st['conns']} connections opened "
                     f"({st['on_new']} first requests on a new one), first request {st['first']:.2f} s, "
                     f"last answer {st['end']:.2f} s, mean in flight {st['area'] / span:.2f} over that span")
    return lines


def cpu_pairs(args, ns, py, base, certs):
    """HTTPS's CPU per URL against plain's on one list, `args.cpu_pairs` times: asyncfetch's defaults on
    the HTTPS variant's list over HTTPS + HTTP/2 and over plain HTTP, back to back in alternating order
    (ABBA...), against two simulators of the same hosts running side by side (plain on :80 with the
    NXDOMAIN responder, TLS on :443), so that load drifting over the minutes falls on both alike. One
    run's ratio divides two sub-second CPU totals and swings by ±0.3 on a shared machine; the median of
    the pairs' ratios is what the target is judged by. Returns (the report's lines, the HTTPS runs'
    median CPU per URL)."""
    folders = {"https": f"{base}/https", "same-list": f"{base}/same-list"}
    if open(f"{folders['https']}/hosts").read() != open(f"{folders['same-list']}/hosts").read():
        raise SystemExit("internet: the HTTPS list and its plain copy name different hosts")
    ns.hosts(f"{folders['https']}/hosts")
    expected = {v: json.load(open(f"{f}/expected.json")) for v, f in folders.items()}
    urls = {v: open(f"{f}/urls.txt").read().split() for v, f in folders.items()}
    origins = {}
    per_url = {"https": [], "same-list": []}
    incomplete = []
    started = time.perf_counter()
    print(f"\nCPU per URL, HTTPS against plain HTTP on one list: {args.cpu_pairs} interleaved pairs", flush=True)
    try:
        origins["same-list"] = Origin(ns, py, folders["same-list"], False, certs)
        origins["https"] = Origin(ns, py, folders["https"], True, certs, dns=False)
        for i in range(args.cpu_pairs):
            for variant in (("https", "same-list") if i % 2 == 0 else ("same-list", "https")):
                folder, tls = folders[variant], variant == "https"
                shutil.rmtree(f"{folder}/cache", ignore_errors=True)
                args.origin = origins[variant]
                origin_reset(args)
                m = measure(ns, asyncfetch_argv(args, folder, tls, certs), folder, args.run_limit)
                ok, junk, _ = score(stored_asyncfetch(folder, urls[variant]), expected[variant])
                obtainable = sum(1 for e in expected[variant].values() if e["digest"])
                if ok != obtainable or junk or m["timed_out"]:
                    incomplete.append(f"pair {i + 1} {variant}: {ok}/{obtainable} images, junk {junk}")
                per_url[variant].append(m["cpu"] / len(urls[variant]))
                print(f"  pair {i + 1} {variant:<9} cpu {m['cpu']:5.2f} s ({m['cpu'] / len(urls[variant]) * 1000:.2f} ms/URL)"
                      f"  wall {m['wall']:5.1f} s  images {ok}/{obtainable}  rss {m['rss']:.0f} MiB", flush=True)
                shutil.rmtree(f"{folder}/cache", ignore_errors=True)
    finally:
        args.origin = None
        for o in origins.values():
            o.stop()
    ratios = sorted(h / p for h, p in zip(per_url["https"], per_url["same-list"]))
    med = lambda xs: sorted(xs)[len(xs) // 2] if len(xs) % 2 else sum(sorted(xs)[len(xs) // 2 - 1:len(xs) // 2 + 1]) / 2
    ms = lambda xs: f"{med(xs) * 1000:.2f} ms ({min(xs) * 1000:.2f}-{max(xs) * 1000:.2f})"
    r = med(ratios)
    lines = [f"CPU per URL, HTTPS / the same list over plain HTTP (asyncfetch defaults, {len(ratios)} interleaved pairs, "
             f"{time.perf_counter() - started:.0f} s): median {r:.2f}, min {ratios[0]:.2f}, max {ratios[-1]:.2f} "
             f"(≤ 1.5 by the median: {'ok' if r <= 1.5 else 'MISSED'}); per pair "
             + ", ".join(f"{h / p:.2f}" for h, p in zip(per_url["https"], per_url["same-list"]))
             + f"; HTTPS {ms(per_url['https'])}, plain {ms(per_url['same-list'])}; all HTTPS CPU / all plain CPU "
             f"{sum(per_url['https']) / sum(per_url['same-list']):.2f}"]
    if incomplete:
        lines.append("  incomplete runs (their CPU is not comparable): " + "; ".join(incomplete))
    return lines, med(per_url["https"])


def origin_reset(args):
    if args.origin.ask("reset") != "ok":
        raise SystemExit("origin.py did not reset its counters")


def run(args):
    """The variants (plain HTTP, HTTPS + HTTP/2, the HTTPS list over plain HTTP); returns the report."""
    if os.geteuid() != 0:
        return "internet case skipped: ip netns needs root"
    preset = PRESETS[args.preset]
    py = venv()
    base = args.base
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    certs = make_ca(f"{base}/tls")
    tables, per_url, pairs = [], {}, []
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    try:
        with Namespace() as ns:
            # (variant, tls): the plain preset, the HTTPS one, and the HTTPS one's list over plain HTTP
            # (asyncfetch's defaults only), so that HTTPS's cost per URL is also compared on one list.
            variants = [] if args.tls_only else [("http", False)]
            if not args.no_tls:
                variants += [("https", True)] + ([] if args.no_same_list else [("same-list", False)])
            for variant, tls in variants:
                folder = f"{base}/{variant}"
                os.makedirs(folder)
                args.origin = None
                try:
                    small = variant != "http"
                    urls_n, hosts_n = (preset["tls_urls"], preset["tls_hosts"]) if small else (preset["urls"], preset["hosts"])
                    generated = generate(folder, urls_n, hosts_n, preset["zipf"], args.seed, tls)
                    ns.hosts(f"{folder}/hosts")
                    args.origin = Origin(ns, py, folder, tls, certs)
                    table, defaults = run_case(args, ns, folder, tls, generated, certs, defaults_only=variant == "same-list")
                    tables.append(table)
                    if defaults:
                        per_url[variant] = defaults["cpu"] / urls_n
                finally:
                    if args.origin:
                        args.origin.stop()
            if args.cpu_pairs > 0 and "https" in per_url and "same-list" in per_url:
                pairs, per_url["https"] = cpu_pairs(args, ns, py, base, certs)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    ratios = []
    for plain, what in (("http", "the plain preset"), ("same-list", "the same list over plain HTTP")):
        if "https" in per_url and plain in per_url and not (pairs and plain == "same-list"):
            r = per_url["https"] / per_url[plain]
            how = "the pairs' median HTTPS run against one plain run" if pairs else "one run each"
            ratios.append(f"CPU per URL, HTTPS / {what} (asyncfetch defaults, {how}): {per_url['https'] * 1000:.2f} / "
                          f"{per_url[plain] * 1000:.2f} ms = {r:.2f} (≤ 1.5: {'ok' if r <= 1.5 else 'MISSED'})")
    ratios += pairs
    if ratios:
        tables.append("\n".join(ratios))
    report = (f"Internet-like case (issue 21), preset {args.preset}, seed {args.seed}, {started}; every tool with "
              f"connect timeout {CONNECT_TIMEOUT} s, {ATTEMPT_TIMEOUT} s per attempt, {RETRIES} retries\n\n"
              + "\n\n".join(tables))
    print("\n" + report, flush=True)
    return report


def add_arguments(ap):
    g = ap.add_argument_group("internet-like case (issue 21)")
    g.add_argument("--internet-preset", dest="preset", choices=sorted(PRESETS), default="issue",
                   help="small (500 URLs / 50 hosts), issue (5,000 / 502, the default), huge (100,000 / 10,000)")
    g.add_argument("--internet-seed", dest="seed", type=int, default=21)
    g.add_argument("--internet-tools", dest="tools", nargs="*",
                   help="only runs whose label starts with one of these (asyncfetch, curl, aria2c, img2dataset)")
    g.add_argument("--internet-no-tls", dest="no_tls", action="store_true", help="skip the HTTPS + HTTP/2 variant")
    g.add_argument("--internet-tls-only", dest="tls_only", action="store_true",
                   help="only the HTTPS + HTTP/2 variant (and its list over plain HTTP)")
    g.add_argument("--internet-no-same-list", dest="no_same_list", action="store_true",
                   help="skip the run of asyncfetch's defaults on the HTTPS variant's list over plain HTTP")
    g.add_argument("--internet-cpu-pairs", dest="cpu_pairs", type=int, default=5,
                   help="after the tables, pairs of HTTPS and same-list plain runs of asyncfetch's defaults, "
                        "interleaved, for HTTPS / plain CPU per URL (default 5; 0: one run each, from the tables)")
    g.add_argument("--img2dataset-threads", dest="img2dataset_threads", type=int, nargs="+", default=[64, 256],
                   help="thread counts to try (2 processes each; the best is compared)")
    g.add_argument("--internet-run-limit", dest="run_limit", type=float, default=900,
                   help="seconds after which one tool run is killed (default 900)")
    g.add_argument("--internet-trace", dest="trace", action="store_true",
                   help="after each run, print how busy the hosts were over time (origin.py's trace)")
    g.add_argument("--internet-keep", dest="keep", action="store_true", help="keep the work folder")
    g.add_argument("--internet-base", dest="base", default="/dev/shm/asyncfetch-internet")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="asyncfetch binary (release build)")
    add_arguments(ap)
    run(ap.parse_args())


if __name__ == "__main__":
    main()
