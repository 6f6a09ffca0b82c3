#!/usr/bin/env python3
"""An internet on one machine: every simulated origin host of `make bench`'s
internet case, in one process (asyncio, uvloop when importable).

Run inside a network namespace (bench/internet.py does it). Each live host
has its own address 127.x.y.z and a listener on it (port 80, or 443 with
--tls), so a host is told apart by the address a connection arrived on; a
dead host has no listener (connection refused). A name that is not in the
namespace's hosts file is answered NXDOMAIN by the UDP responder on
127.0.0.53:53 this process also runs (unless --no-dns: then a second
simulator of the same hosts, on the other port, can run beside it).

Per host (from the world file written by bench/internet.py): a round-trip
time (a new connection's first response waits one extra RTT, two over TLS,
where asyncio completes the handshake at once; every response waits one RTT), a bandwidth per connection, a connection
limit (a connection beyond it gets `429` + `Retry-After: 1` and is closed),
and a kind: ok, slow (3 s of think time per response, 64 KB/s), blackhole
(accepts, never answers, never completes a TLS handshake), dead (no
listener). Per URL path: img, flaky (500 the first time in a run, then the
image), redirect (302 to another path), html (200 text/html), 404 (any path
not listed is also a 404).

Counters per host (requests, 429s, most connections at once, connections)
are read and reset over a Unix socket (`dump`, `reset`), so one simulator
serves many tool runs; the flaky state is reset with them. `trace` returns
every connection opened and closed and every request received and answered
since the last reset, with its time and host (what bench/internet.py's
--internet-trace summarises: how busy each host was, and when). SIGTERM
dumps the counters to --counters and exits.
"""
import argparse, asyncio, json, os, resource, signal, socket, ssl, sys, time

try:
    import h2.config, h2.connection, h2.events, h2.exceptions
except ImportError:          # plain HTTP needs no h2
    h2 = None

IDLE_CLOSE = 15.0          # seconds a kept-alive connection may sit idle
SLOW_THINK = 3.0           # seconds of think time per response on a slow host
SLOW_BANDWIDTH = 64 * 1024
CHUNK_INTERVAL = 0.02      # pacing tick for bandwidth (seconds)


class Host:
    __slots__ = ("index", "name", "ip", "rtt", "bw", "limit", "kind", "paths", "open", "most", "requests", "n429",
                 "connections", "resumed", "flaky_done")

    def __init__(self, h, index):
        self.index = index
        self.name, self.ip, self.kind = h["name"], h["ip"], h["kind"]
        self.rtt, self.bw, self.limit = h["rtt_ms"] / 1000.0, h["bw"], h["limit"]
        self.paths = {p: tuple(a) for p, a in h.get("paths", {}).items()}
        self.open = 0
        self.reset()

    def reset(self):
        self.most = self.open
        self.requests = self.n429 = self.connections = self.resumed = 0
        self.flaky_done = set()

    def counters(self):
        return {"name": self.name, "kind": self.kind, "requests": self.requests, "429": self.n429,
                "most": self.most, "connections": self.connections, "resumed": self.resumed}


class World:
    def __init__(self, path, images):
        with open(path) as f:
            w = json.load(f)
        self.hosts = [Host(h, i) for i, h in enumerate(w["hosts"])]
        self.images = []
        for name in w["images"]:
            with open(os.path.join(images, name), "rb") as f:
                self.images.append((f.read(), "image/png" if name.endswith(".png") else "image/jpeg"))

    def respond(self, host, path):
        """(status, headers list, body) for a GET of `path` on `host`."""
        host.requests += 1
        action = host.paths.get(path)
        if action is None or action[0] == "404":
            return 404, [("Content-Type", "text/html")], b"<html><body><h1>404 Not Found</h1></body></html>\n"
        kind = action[0]
        if kind == "flaky" and path not in host.flaky_done:
            host.flaky_done.add(path)
            return 500, [("Content-Type", "text/html")], b"<html><body>500 Internal Server Error</body></html>\n"
        if kind in ("img", "flaky"):
            body, ctype = self.images[action[1]]
            return 200, [("Content-Type", ctype), ("Cache-Control", "max-age=86400")], body
        if kind == "redirect":
            return 302, [("Location", action[1]), ("Content-Type", "text/html")], b"<html>moved</html>\n"
        if kind == "html":
            body = (b"<!DOCTYPE html><html><head><title>Page %d</title></head><body>" % action[1]
                    + b"<p>This is a web page, not an image.</p>" * 20 + b"</body></html>\n")
            return 200, [("Content-Type", "text/html; charset=utf-8")], body
        return 404, [("Content-Type", "text/html")], b"not found\n"


REASONS = {200: "OK", 302: "Found", 404: "Not Found", 429: "Too Many Requests", 500: "Internal Server Error"}
TOO_MANY = (429, [("Retry-After", "1"), ("Content-Type", "text/html")], b"<html>429 Too Many Requests</html>\n")


# Event codes of the trace: a connection opened (c) or closed (x), a request received (q) or answered (r).
OPENED, CLOSED, RECEIVED, ANSWERED = "c", "x", "q", "r"


class Connection(asyncio.Protocol):
    """One accepted connection to one host: HTTP/1.1, or after TLS either
    HTTP/1.1 or HTTP/2 by ALPN."""

    def __init__(self, sim, host):
        self.sim, self.host = sim, host
        self.loop = sim.loop
        self.transport = None
        self.closed = False
        self.timers = set()
        self.buf = b""
        self.queue = []
        self.busy = False
        self.h2 = None
        self.first = True
        sim.connection_ids += 1
        self.cid = sim.connection_ids

    # life cycle -----------------------------------------------------------
    def connection_made(self, transport):
        self.transport = transport
        host = self.host
        host.open += 1
        host.connections += 1
        host.most = max(host.most, host.open)
        self.sim.note(host, OPENED, self.cid)
        self.over = host.open > host.limit
        self.ready_at = self.loop.time() + host.rtt          # the connect round trip
        if host.kind == "blackhole":
            return                                             # accept, never answer
        if self.sim.tls:
            # The handshake is done (asyncio's TLS); its round trip is charged to the first response.
            self.ready_at += host.rtt
            tls = transport.get_extra_info("ssl_object")
            if tls.session_reused:
                host.resumed += 1                              # an abbreviated handshake (a resumed TLS session)
            if tls.selected_alpn_protocol() == "h2":
                self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding=None))
                self.h2.initiate_connection()                 # h2's default: 100 concurrent streams
                self.streams = {}                              # stream id -> [body, offset, blocked on the window]
                self.flush()
        self.touch()

    def connection_lost(self, exc):
        if not self.closed:
            self.closed = True
            self.host.open -= 1
            self.sim.note(self.host, CLOSED, self.cid)
        for t in self.timers:
            t.cancel()
        self.timers.clear()

    def abort(self):
        if self.transport is not None and not self.closed:
            self.transport.abort()

    def later(self, delay, fn):
        holder = []

        def run():
            self.timers.discard(holder[0])
            if not self.closed:
                fn()
        handle = self.loop.call_later(max(0.0, delay), run)
        holder.append(handle)
        self.timers.add(handle)
        return handle

    def touch(self):
        """(Re)arms the idle close."""
        if getattr(self, "idle", None) is not None:
            self.idle.cancel()
            self.timers.discard(self.idle)
        self.idle = self.later(IDLE_CLOSE, self.abort)

    # input ------------------------------------------------------------------
    def data_received(self, data):
        if self.host.kind == "blackhole" or self.closed:
            return
        self.touch()
        if self.h2 is not None:
            self.h2_received(data)
            return
        self.buf += data
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buf) > 65536:
                    self.abort()
                return
            head, self.buf = self.buf[:end].decode("latin-1"), self.buf[end + 4:]
            lines = head.split("\r\n")
            parts = lines[0].split(" ")
            if len(parts) != 3:
                self.abort()
                return
            close = parts[2] == "HTTP/1.0"
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "connection":
                    v = value.strip().lower()
                    close = "close" in v or (close and "keep-alive" not in v)
            self.queue.append((parts[1], close))
            self.sim.note(self.host, RECEIVED, self.cid)
            self.next()

    def delay(self):
        """Seconds until a response to a request arriving now may start."""
        now = self.loop.time()
        d = max(self.ready_at, now) - now + self.host.rtt
        if self.host.kind == "slow":
            d += SLOW_THINK
        return d

    def bandwidth(self):
        return SLOW_BANDWIDTH if self.host.kind == "slow" else self.host.bw

    def answer(self, path):
        if self.over:
            self.host.requests += 1
            self.host.n429 += 1
            return TOO_MANY, True
        return self.sim.world.respond(self.host, path.split("?", 1)[0]), False

    # HTTP/1.1 -----------------------------------------------------------------
    def next(self):
        if self.busy or not self.queue or self.closed:
            return
        self.busy = True
        path, close = self.queue.pop(0)
        self.later(self.delay(), lambda: self.send1(path, close))

    def send1(self, path, close):
        (status, headers, body), reject = self.answer(path)
        close = close or reject
        head = [f"HTTP/1.1 {status} {REASONS.get(status, 'OK')}", f"Content-Length: {len(body)}", "Server: origin-sim"]
        head += [f"{k}: {v}" for k, v in headers]
        if close:
            head.append("Connection: close")
        self.transport.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        self.pace(body, 0, lambda: self.done1(close))

    def pace(self, body, offset, done):
        """Writes body[offset:] at the host's bandwidth, then calls done."""
        if self.closed:
            return
        step = max(4096, int(self.bandwidth() * CHUNK_INTERVAL))
        chunk = body[offset:offset + step]
        if chunk:
            self.transport.write(chunk)
        offset += len(chunk)
        if offset >= len(body):
            done()
        else:
            self.later(len(chunk) / self.bandwidth(), lambda: self.pace(body, offset, done))

    def done1(self, close):
        self.sim.note(self.host, ANSWERED, self.cid)
        self.touch()
        if close:
            self.transport.close()
            return
        self.busy = False
        self.next()

    # HTTP/2 ---------------------------------------------------------------------
    def flush(self):
        out = self.h2.data_to_send()
        if out and not self.closed:
            self.transport.write(out)

    def h2_received(self, data):
        try:
            events = self.h2.receive_data(data)
        except h2.exceptions.ProtocolError:
            self.flush()
            self.abort()
            return
        for ev in events:
            if isinstance(ev, h2.events.RequestReceived):
                headers = dict(ev.headers)
                path = headers.get(b":path", b"/").decode("latin-1")
                sid = ev.stream_id
                self.sim.note(self.host, RECEIVED, self.cid)
                self.later(self.delay(), lambda sid=sid, path=path: self.send2(sid, path))
            elif isinstance(ev, h2.events.WindowUpdated):
                self.resume2()
            elif isinstance(ev, h2.events.StreamReset):
                self.streams.pop(ev.stream_id, None)
            elif isinstance(ev, h2.events.ConnectionTerminated):
                self.flush()
                self.transport.close()
                return
        self.flush()

    def send2(self, sid, path):
        (status, headers, body), reject = self.answer(path)
        try:
            self.h2.send_headers(sid, [(":status", str(status)), ("content-length", str(len(body))),
                                       ("server", "origin-sim")] + [(k.lower(), v) for k, v in headers])
        except h2.exceptions.StreamClosedError:
            return
        self.flush()
        self.streams[sid] = [body, 0, False]
        self.pump2(sid)
        if reject:
            self.later(0.05, lambda: (self.h2.close_connection(), self.flush(), self.transport.close()))

    def pump2(self, sid):
        """Sends one paced chunk of stream `sid` within the flow-control window."""
        st = self.streams.get(sid)
        if st is None or self.closed:
            return
        body, offset, _ = st
        st[2] = False
        step = max(4096, int(self.bandwidth() * CHUNK_INTERVAL))
        try:
            window = self.h2.local_flow_control_window(sid)
            n = min(step, window, self.h2.max_outbound_frame_size, len(body) - offset)
            if n > 0 or offset == len(body):
                end = offset + n >= len(body)
                self.h2.send_data(sid, body[offset:offset + n], end_stream=end)
                self.flush()
                if end:
                    del self.streams[sid]
                    self.sim.note(self.host, ANSWERED, self.cid)
                    return
                st[1] = offset + n
                self.later(n / self.bandwidth(), lambda: self.pump2(sid))
            else:
                st[2] = True                                   # blocked on the window; WindowUpdated resumes
        except (h2.exceptions.StreamClosedError, h2.exceptions.FlowControlError, KeyError):
            self.streams.pop(sid, None)

    def resume2(self):
        for sid, st in list(self.streams.items()):
            if st[2] and self.h2.local_flow_control_window(sid) > 0:
                self.pump2(sid)


class Dns(asyncio.DatagramProtocol):
    """Answers every query NXDOMAIN (the names that resolve are in the hosts file)."""

    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data, addr):
        if len(data) < 12:
            return
        qd = data[12:]
        end = qd.find(b"\x00")
        question = qd[:end + 5] if end >= 0 else b""
        flags = 0x8183 | (data[2] & 0x01) << 8          # response, RD copied, RA, RCODE 3
        reply = data[:2] + flags.to_bytes(2, "big") + (b"\x00\x01" if question else b"\x00\x00") + b"\x00" * 6 + question
        self.transport.sendto(reply, addr)


class Control(asyncio.Protocol):
    """`dump` (counters as one JSON line), `reset`, `ping` over the Unix socket."""

    def __init__(self, sim):
        self.sim, self.buf = sim, b""

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self.buf += data
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            cmd = line.decode().strip()
            if cmd == "dump":
                self.transport.write((json.dumps(self.sim.counters()) + "\n").encode())
            elif cmd == "reset":
                for h in self.sim.world.hosts:
                    h.reset()
                self.sim.reset_trace()
                self.transport.write(b"ok\n")
            elif cmd == "trace":
                self.transport.write((json.dumps(self.sim.trace()) + "\n").encode())
            else:
                self.transport.write(b"pong\n")


class Simulator:
    def __init__(self, args):
        self.args = args
        self.world = World(args.world, args.images)
        self.tls = None
        if args.tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(args.cert, args.key)
            if not args.server_cipher_order:
                # The client's order picks the suite, as nginx's default (`ssl_prefer_server_ciphers off`);
                # Python's default context takes its own (AES-256-GCM first).
                ctx.options &= ~ssl.OP_CIPHER_SERVER_PREFERENCE
            ctx.set_alpn_protocols(["h2", "http/1.1"])
            self.tls = ctx
        self.events = []          # the trace: (seconds since the last reset, host index, code, connection)
        self.t0 = time.monotonic()
        self.connection_ids = 0

    def counters(self):
        return {"hosts": [h.counters() for h in self.world.hosts if h.kind != "nxdomain"]}

    def note(self, host, code, connection):
        self.events.append((round(time.monotonic() - self.t0, 4), host.index, code, connection))

    def reset_trace(self):
        self.events = []
        self.t0 = time.monotonic()

    def trace(self):
        """Every event since the last reset: [seconds since it, host index, code, connection]; and the hosts' names."""
        return {"names": [h.name for h in self.world.hosts], "events": self.events}

    async def main(self):
        self.loop = asyncio.get_running_loop()
        port = 443 if self.tls else 80
        servers = []
        for host in self.world.hosts:
            if host.kind in ("dead", "nxdomain"):
                continue
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((host.ip, port))
            s.listen(1024)
            s.setblocking(False)
            # A black hole accepts and never answers: over TLS it never completes a handshake either.
            tls = self.tls if host.kind != "blackhole" else None
            servers.append(await self.loop.create_server(lambda host=host: Connection(self, host), sock=s, ssl=tls,
                                                         ssl_handshake_timeout=30 if tls else None))
        # Every server and transport is kept referenced: uvloop closes one that is garbage collected.
        if not self.args.no_dns:
            servers.append(await self.loop.create_datagram_endpoint(Dns, local_addr=("127.0.0.53", 53)))
        if os.path.exists(self.args.control):
            os.unlink(self.args.control)
        servers.append(await self.loop.create_unix_server(lambda: Control(self), self.args.control))
        stop = asyncio.Event()
        self.loop.add_signal_handler(signal.SIGTERM, stop.set)
        self.loop.add_signal_handler(signal.SIGINT, stop.set)
        print(f"origin: {len(servers) - (1 if self.args.no_dns else 2)} hosts listening on :{port}", file=sys.stderr, flush=True)
        await stop.wait()
        if self.args.counters:
            with open(self.args.counters, "w") as f:
                json.dump(self.counters(), f)
        os._exit(0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--world", required=True, help="world.json written by bench/internet.py")
    ap.add_argument("--images", required=True, help="folder of the image pool the world names")
    ap.add_argument("--control", required=True, help="Unix socket for dump/reset")
    ap.add_argument("--counters", help="write the counters here on SIGTERM")
    ap.add_argument("--tls", action="store_true", help="HTTPS on :443 (HTTP/2 or HTTP/1.1 by ALPN)")
    ap.add_argument("--cert"); ap.add_argument("--key")
    ap.add_argument("--server-cipher-order", action="store_true",
                    help="TLS: pick the cipher suite by the server's order, not the client's")
    ap.add_argument("--no-dns", action="store_true",
                    help="no NXDOMAIN responder (another simulator of the same hosts answers on 127.0.0.53)")
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    try:
        import uvloop
        uvloop.install()
    except ImportError:
        pass
    asyncio.run(Simulator(args).main())


if __name__ == "__main__":
    main()
