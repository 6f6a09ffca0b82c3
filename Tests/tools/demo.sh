#!/usr/bin/env bash
# make demo: serve Fixtures/ on 127.0.0.1, then show a cold pass (network),
# a warm pass (cache) and an --offline pass that includes a URL never fetched.
set -euo pipefail
bin=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/asyncfetch-demo.XXXXXX)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
# `python3 -m http.server` listens with a backlog of 5: eight parallel
# connects overflow it and some wait a second for a SYN retransmit. This one
# is the same server with room for every connection the demo opens.
# A copy of Fixtures/ last modified 30 days ago, as a site's images usually
# are: Last-Modified then makes them fresh for 3 days (RFC 9111 §4.2.2), and
# the warm pass is cache hits even on a fresh clone (whose files are minutes old).
cp -R "$root/Fixtures" "$work/www"
find "$work/www" -exec touch -d '30 days ago' {} +
python3 - "$port" "$work/www" >"$work/server.log" 2>&1 <<'PY' &
import functools, http.server, sys
class Server(http.server.ThreadingHTTPServer):
    request_queue_size = 128
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[2])
Server(("127.0.0.1", int(sys.argv[1])), handler).serve_forever()
PY
server_pid=$!
for _ in $(seq 1 50); do
  curl -fsS -o /dev/null "http://127.0.0.1:$port/index.html" 2>/dev/null && break
  sleep 0.1
done
base="http://127.0.0.1:$port"
sed "s#{BASE}#$base#g" "$root/Fixtures/demo-urls.txt" > "$work/urls.txt"
mapfile -t urls < <(grep -v '^[[:space:]]*#' "$work/urls.txt" | grep -v '^[[:space:]]*$')
cache="$work/cache"

step() { printf '\n\033[1m== %s\033[0m\n$ %s\n' "$1" "$2"; }

step "1. Cold pass over a URL list: every URL goes loading → success or failure (JSON Lines show each phase change)" \
     "asyncfetch --cache-dir CACHE --json --input urls.txt"
"$bin" --cache-dir "$cache" --json --input "$work/urls.txt" || echo "(exit status $?: some URLs failed, as the list expects)"

step "2. Warm pass: fresh entries come from the cache, no network" \
     "asyncfetch --cache-dir CACHE --input urls.txt"
"$bin" --cache-dir "$cache" --input "$work/urls.txt" || echo "(exit status $?)"

never="$base/images/never-fetched.png"
step "3. Offline pass: which are cached? (no network at all; the last URL was never fetched)" \
     "asyncfetch --cache-dir CACHE --offline ${urls[0]} ${urls[1]} $never"
"$bin" --cache-dir "$cache" --offline "${urls[0]}" "${urls[1]}" "$never" || echo "(exit status $?: a URL is not cached)"

step "4. Where a body lives: the MD5 of the URL in the cache directory" \
     "asyncfetch --cache-dir CACHE cache path ${urls[0]}"
"$bin" cache path --cache-dir "$cache" "${urls[0]}"
printf '$ printf %%s %s | md5sum\n' "${urls[0]}"
printf %s "${urls[0]}" | md5sum

step "5. The body itself on stdout, for a pipe (the report goes to stderr)" \
     "asyncfetch --cache-dir CACHE ${urls[0]} -o - | file -"
"$bin" --cache-dir "$cache" "${urls[0]}" -o - | { command -v file >/dev/null && file - || od -c | head -1; }

step "6. The whole list into a folder, under readable names (reflinks or copies of the cache's files)" \
     "asyncfetch --cache-dir CACHE --input urls.txt -P photos/ -q"
"$bin" --cache-dir "$cache" --input "$work/urls.txt" -P "$work/photos" -q || echo "(exit status $?: the failures above)"
ls "$work/photos"

cat <<NEXT

Done. The binary is $bin
(a release build; this demo's server, cache and folder were temporary and are gone).
Next:
  $bin https://example.com/cat.png      # your own URLs (any http or https image)
  make install PREFIX=\$HOME/.local        # puts asyncfetch, its man page and completions there
  man asyncfetch                          # every option; README.md has more examples
NEXT
