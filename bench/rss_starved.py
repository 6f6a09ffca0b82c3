#!/usr/bin/env python3
"""Peak RSS of the revalidate case (10,000 stale entries, all 304, one nginx on
tmpfs) while the completion workers are starved: a busy loop pinned to core 0
and every `cache-worker-*` thread moved there with SCHED_IDLE as it appears, so
finished 304s wait for them (bench/history/revalidate.md "Session 16: peak RSS of the
revalidate case"). Three runs of each binary, alternating; peak RSS from wait4.

  python3 bench/rss_starved.py BINARY [BINARY ...]     (root: SCHED_IDLE of another process's threads)
"""
import os, sys, time, subprocess, tempfile, shutil, glob
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import Nginx, png
bins = sys.argv[1:]
if not bins:
    raise SystemExit(__doc__)
root = tempfile.mkdtemp(prefix="rssprobe-", dir="/dev/shm"); os.chmod(root, 0o755)
www = f"{root}/www"; os.makedirs(www)
body = png(64, 60, 1)
for i in range(10000):
    with open(f"{www}/{i}.png", "wb") as f: f.write(body)
    os.utime(f"{www}/{i}.png", (time.time() - 30 * 86400,) * 2)
nginx = Nginx(www, f"{root}/nginx", addresses=["127.0.0.1"])
urls = f"{root}/urls.txt"
open(urls, "w").write("".join(f"http://127.0.0.1:{nginx.port}/{i}.png\n" for i in range(10000)))
cache = f"{root}/cache"
subprocess.run([bins[0], "--cache-dir", cache, "-q", "--input", urls], check=True)
hog = subprocess.Popen(["taskset", "-c", "0", "python3", "-c", "while True: pass"])
try:
    for rep in range(3):
        for b in bins:
            p = subprocess.Popen([b, "--cache-dir", cache, "-q", "--refresh", "--jobs", "8", "--jobs-per-host", "8", "--input", urls])
            done = set()
            while p.poll() is None:
                for t in glob.glob(f"/proc/{p.pid}/task/*"):
                    tid = int(t.rsplit("/", 1)[1])
                    if tid in done: continue
                    try: comm = open(t + "/comm").read().strip()
                    except OSError: continue
                    if comm.startswith("cache-worker"):
                        try:
                            os.sched_setaffinity(tid, {0}); os.sched_setscheduler(tid, os.SCHED_IDLE, os.sched_param(0)); done.add(tid)
                        except OSError: pass
                time.sleep(0.002)
                if len(done) >= 2: break
            _, status, ru = os.wait4(p.pid, 0)
            print(f"{b}: rep {rep} maxrss {ru.ru_maxrss/1024:.1f} MB workers starved {len(done)} exit {status>>8}", flush=True)
finally:
    hog.kill(); nginx.stop(); shutil.rmtree(root, ignore_errors=True)
