#define _GNU_SOURCE
#include "EarlySignals.h"
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

// SIGINT and SIGTERM from before any library initialises (SPEC §6).
//
// Before, the run's handler (`Interruption`) was installed a few
// milliseconds into the run, after the Swift runtime's start, the
// command-line parse and the cache's opening: a signal in that window took
// the default action and killed the process, with no report per URL and no
// summary (a script reading --json got nothing). Now one handler, this one,
// is installed from .preinit_array, before any library initialises and any
// thread exists, and stays for the process's life. What it does depends on
// one atomic word, `state`:
//
// - CATCHING (the start): the first signal is recorded in `state`. A
//   second one before the hand-over ends the process at once, killed by it,
//   as a second Ctrl-C does during a run: no path where Ctrl-C is ignored.
// - handed over (a run's `Interruption` gave its self-pipe): the signal
//   number is written to the pipe, the one async-signal-safe way to tell
//   the run; a signal recorded before is returned by the hand-over itself,
//   and is the run's first signal: the run has not begun, and every URL is
//   reported cancelled.
// - DEFAULT (every path that is not a run: the `cache` commands, --help,
//   --version, usage errors): the default disposition is back, and a
//   signal recorded before ends the process there and then, killed by it
//   (a shell sees 130 or 143), as if it had come at that moment.
//
// Why a handler that records, rather than blocking the two signals until
// the hand-over: a block would not hold. The Swift runtime's async `main`
// parks the main thread in libdispatch's `dispatch_main`, which waits in
// `sigsuspend` with an empty mask from the first milliseconds on; that
// takes any signal, blocked or not, and it came with the default action
// (killed: seen with a signal pending at exec). Every other thread the
// runtime starts blocks both (libdispatch's workers), so that main thread
// is the one that takes them; a handler works on it, and on any other
// thread the kernel may pick, without touching a mask.
//
// Start-up also unblocks the two signals when the process inherits them
// blocked (a parent's thread spawned it with its mask: libdispatch's workers
// block both). They then waited, pending, until that main thread's
// `sigsuspend`, some milliseconds in, or for ever when the process ended
// sooner (`--version` exited 0 with a SIGTERM pending); now one pending at
// exec is taken here, as the first signal, and any later one at once.
//
// A signal whose disposition the process inherits as ignored (`nohup`, a
// background job of a non-interactive shell) stays ignored until a run's
// hand-over installs the handler, as before this start existed.
//
// Left: the kernel's exec and the dynamic loader's work before
// .preinit_array (about 0.2 ms of CPU; 2 ms of wall, up to ~8 ms, on a
// loaded machine; no user code can run earlier in a dynamically linked
// executable); a signal there still kills the process.

enum { CATCHING = 0, DEFAULT = -1, HANDED_OVER = 1 << 16 };   // 1..64: a recorded signal

/// CATCHING, a recorded signal, DEFAULT, or HANDED_OVER + the pipe's write end.
static _Atomic long state = CATCHING;

static const int signals[] = {SIGINT, SIGTERM};
/// Whether start-up installed the handler for signals[i] (not when the
/// process inherited it ignored, or when sigaction failed).
static int caught[2];

/// Ends the process killed by `signo`. Async-signal-safe (it also runs in
/// the handler, where `signo` is blocked: it is delivered at the unblock).
/// Where a call fails, the exit status is still the one a shell shows.
static void die_by(int signo) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = SIG_DFL;
    if (sigemptyset(&action.sa_mask) == 0 && sigaction(signo, &action, NULL) == 0 && raise(signo) == 0) {
        sigset_t only;
        if (sigemptyset(&only) == 0 && sigaddset(&only, signo) == 0) (void)pthread_sigmask(SIG_UNBLOCK, &only, NULL);
    }
    _exit(128 + signo);   // reached only if a call above failed
}

static void on_signal(int signo) {
    int saved = errno;
    long current = atomic_load(&state);
    for (;;) {
        if (current >= HANDED_OVER) {
            unsigned char byte = (unsigned char)signo;
            // Nowhere to report a failure from here: the pipe is the run's
            // own and empty but for signals, so the write does not fail.
            (void)write((int)(current - HANDED_OVER), &byte, 1);
            break;
        }
        if (current != CATCHING) die_by(signo);   // DEFAULT, or a second signal before the hand-over
        if (atomic_compare_exchange_weak(&state, &current, signo)) break;
        // `current` now holds what changed meanwhile (a hand-over, another signal): look again.
    }
    errno = saved;
}

static int install(int signo) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    action.sa_flags = SA_RESTART;
    if (sigemptyset(&action.sa_mask) == -1) return -1;
    return sigaction(signo, &action, NULL);
}

static void catch_early_signals(int argc, char **argv, char **envp) {
    (void)argc;
    (void)argv;
    (void)envp;
    int saved = errno;
    sigset_t both;
    int have_set = sigemptyset(&both) == 0;
    for (int i = 0; i < 2; i++) {
        struct sigaction inherited;
        // A failure here leaves that signal as it was before this start
        // existed: default until a run's hand-over installs the handler
        // (and reports a failure of its own), default for the rest.
        if (sigaction(signals[i], NULL, &inherited) == -1) continue;
        if (inherited.sa_handler != SIG_IGN) caught[i] = install(signals[i]) == 0;
        if (have_set) have_set = sigaddset(&both, signals[i]) == 0;
    }
    // After the handler: one pending at exec is caught as the mask clears.
    // Fails only on a bad argument; the signals then stay as inherited.
    if (have_set) (void)pthread_sigmask(SIG_UNBLOCK, &both, NULL);
    errno = saved;
}

__attribute__((section(".preinit_array"), used))
static void (*const catch_at_start)(int, char **, char **) = catch_early_signals;

int cstartup_hand_over_signals(int fd) {
    long previous = atomic_exchange(&state, HANDED_OVER + (long)fd);
    for (int i = 0; i < 2; i++) {
        if (!caught[i] && install(signals[i]) == -1) return -1;
        caught[i] = 1;
    }
    return previous > CATCHING && previous < HANDED_OVER ? (int)previous : 0;
}

void cstartup_signals_default(void) {
    long current = atomic_load(&state);
    do {
        if (current >= HANDED_OVER || current == DEFAULT) return;   // a run's, or done already
    } while (!atomic_compare_exchange_weak(&state, &current, DEFAULT));
    for (int i = 0; i < 2; i++) {
        if (!caught[i]) continue;
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = SIG_DFL;
        // On a failure the handler stays, and in DEFAULT it ends the process
        // by the signal itself: the outcome is the same.
        if (sigemptyset(&action.sa_mask) == 0 && sigaction(signals[i], &action, NULL) == 0) caught[i] = 0;
    }
    if (current > CATCHING) die_by((int)current);
}

int cstartup_ignore_sigpipe(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = SIG_IGN;
    if (sigemptyset(&action.sa_mask) == -1) return -1;
    return sigaction(SIGPIPE, &action, NULL);
}
