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
# The session's processes are read from /proc (no `ps`: procps is not on every image).
if ! [ -r /proc/self/stat ]; then
  echo "time-limit.sh: /proc is not readable: cannot find the processes a run starts" >&2
  exit 2
fi
session=""

# Every live process of the session (a zombie, the leader before it is waited for, is gone already).
# /proc/PID/stat: the fields after the command's closing parenthesis are state, ppid, pgrp, session.
members() {
  [ -n "$session" ] || return 0
  cat /proc/[0-9]*/stat 2>/dev/null | awk -v sid="$session" '{ pid = $1; sub(/^.*\) /, ""); if ($4 == sid && $1 != "Z") print pid }'
}

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

# The traps come first and only note the signal: one between the start and `session=$!` would
# otherwise end this script, or find no session to end, and leave the session running.
caught=""
trap 'caught=130' INT
trap 'caught=143' TERM
stop() {
  kill "$timer" 2>/dev/null
  end_session
  wait "$session" 2>/dev/null
  exit "$1"
}
sleep "$limit" &
timer=$!
# Not a process group leader (a background job of a shell without job
# control), so setsid makes the session in this very process: its id is $!.
setsid "$@" &
session=$!
finished=""
while [ -z "${finished:-}" ]; do
  [ -n "$caught" ] && stop "$caught"
  # A trapped signal ends the wait at once (status above 128, nothing finished).
  wait -n -p finished "$session" "$timer"
  status=$?
done
[ -n "$caught" ] && stop "$caught"
if [ "${finished:-}" = "$session" ]; then
  kill "$timer" 2>/dev/null
  wait "$timer" 2>/dev/null
  exit "$status"
fi
echo "time-limit.sh: '$*' still running after $limit s: ending it and every process it started" >&2
end_session
wait "$session" 2>/dev/null
exit 124
