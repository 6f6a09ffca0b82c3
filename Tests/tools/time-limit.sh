#!/usr/bin/env bash
# time-limit.sh SECONDS COMMAND [ARG...]: runs COMMAND, and when it is still
# running after SECONDS ends it with everything it started, then exits 124
# (as `timeout` does); otherwise exits with COMMAND's status.
#
# Why not `timeout`: it signals its own process group, and `swift test` starts
# the `.xctest` process in a group of its own, which then kept running after
# `timeout` fired (and after `timeout -s KILL` always). COMMAND runs here in a
# session of its own instead (setsid): a process group inside it is still in
# it, so SIGTERM, then SIGKILL 5 s later, go to every process of that session.
# A SIGINT or SIGTERM to this script (Ctrl-C on `make test`: the new session is
# not in the terminal's foreground group) ends the session the same way.
set -uo pipefail
if [ $# -lt 2 ] || ! [[ $1 =~ ^[0-9]+$ ]]; then
  echo "usage: time-limit.sh SECONDS COMMAND [ARG...]" >&2
  exit 2
fi
limit=$1
shift

# Not a process group leader (a background job of a shell without job
# control), so setsid makes the session in this very process: its id is $!.
setsid "$@" &
session=$!

# Every live process of the session (a zombie, the leader before it is waited for, is gone already).
members() { ps -e -o sid= -o pid= -o stat= | awk -v sid="$session" '$1 == sid && $3 !~ /^Z/ { print $2 }'; }

end_session() {
  local pids
  pids=$(members)
  [ -n "$pids" ] && kill -TERM $pids 2>/dev/null
  for _ in $(seq 1 50); do
    [ -z "$(members)" ] && return 0
    sleep 0.1
  done
  pids=$(members)
  [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
  return 0
}

sleep "$limit" &
timer=$!
trap 'kill "$timer" 2>/dev/null; end_session; wait "$session" 2>/dev/null; exit 130' INT
trap 'kill "$timer" 2>/dev/null; end_session; wait "$session" 2>/dev/null; exit 143' TERM
wait -n -p finished "$session" "$timer"
status=$?
if [ "${finished:-}" = "$session" ]; then
  kill "$timer" 2>/dev/null
  wait "$timer" 2>/dev/null
  exit "$status"
fi
echo "time-limit.sh: '$*' still running after $limit s: ending it and every process it started" >&2
end_session
wait "$session" 2>/dev/null
exit 124
