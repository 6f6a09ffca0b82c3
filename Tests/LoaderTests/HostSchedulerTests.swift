import Fetch
import Loader
import Testing

/// `HostScheduler` driven by a fake clock: no sockets, no real time.
@Suite struct HostSchedulerTests {
    typealias Scheduler = HostScheduler<Int>

    static func host(_ name: String) -> HostKey { HostKey(origin: "http://" + name, name: name) }
    static let a = host("a.example"), b = host("b.example"), c = host("c.example")

    /// The scheduler and a fake clock, checking after every call that no
    /// limit is exceeded (counted from the actions, not from the scheduler's word).
    struct Harness {
        var scheduler: Scheduler
        var now = 0.0
        var running: [HostKey: Int] = [:]
        var started: [(Int, HostKey)] = []
        var failed: [(Int, HostKey, HostFailure)] = []
        var notes: [HostNote] = []
        var mostAtOnce: [HostKey: Int] = [:]
        var mostOverall = 0
        /// Global slots lent to work of no host (`borrow`), and the borrowers lent one, in order.
        var lent = 0
        var lentTo: [Int] = []
        /// Times a limit was exceeded (must stay 0).
        var violations = 0

        init(jobs: Int, perHost: Int, configure: (inout HostPolicy) -> Void = { _ in }) {
            var policy = HostPolicy(jobs: jobs, jobsPerHost: perHost)
            configure(&policy)
            scheduler = Scheduler(policy: policy)
        }

        mutating func apply(_ actions: [Scheduler.Action]) {
            for action in actions {
                switch action {
                case .start(let item, let host, _):
                    started.append((item, host))
                    running[host, default: 0] += 1
                    mostAtOnce[host] = max(mostAtOnce[host] ?? 0, running[host] ?? 0)
                case .fail(let item, let host, let failure):
                    failed.append((item, host, failure))
                case .note(let note):
                    notes.append(note)
                case .lend(let item):
                    lent += 1
                    lentTo.append(item)
                }
            }
            let total = running.values.reduce(0, +) + lent
            mostOverall = max(mostOverall, total)
            if total > scheduler.policy.jobs { violations += 1 }
            // A halved limit may sit below what already runs; `jobsPerHost` never may.
            for (_, count) in running where count > scheduler.policy.jobsPerHost { violations += 1 }
        }

        mutating func enqueue(_ item: Int, _ host: HostKey) { apply(scheduler.enqueue(item, host: host, now: now)) }

        mutating func enqueue(_ items: Range<Int>, _ host: HostKey) {
            for item in items { enqueue(item, host) }
        }

        /// Reports an outcome for one running item of `host` and frees its slot.
        mutating func complete(_ host: HostKey, _ outcome: Scheduler.Outcome, requeue: Int? = nil) {
            apply(scheduler.report(outcome, host: host, now: now))
            running[host, default: 0] -= 1
            if running[host] == 0 { running[host] = nil }
            apply(scheduler.finished(host: host, requeue: requeue, now: now))
        }

        mutating func borrow(_ item: Int) { apply(scheduler.borrow(item, now: now)) }

        mutating func giveBack() {
            lent -= 1
            apply(scheduler.giveBack(now: now))
        }

        mutating func advance(to time: Double) {
            now = time
            apply(scheduler.tick(now: now))
        }

        func startedItems(on host: HostKey) -> [Int] { started.filter { $0.1 == host }.map(\.0) }
    }

    // MARK: Host key

    @Test func hostKeyIsSchemeHostAndPortWithoutUserInfo() throws {
        let plain = try #require(HostKey(normalizedURL: "https://img.example.com/a/b.png?x=1"))
        #expect(plain.origin == "https://img.example.com")
        #expect(plain.name == "img.example.com")
        #expect(HostKey(normalizedURL: "https://user:pw@img.example.com/c.png") == plain)
        #expect(HostKey(normalizedURL: "https://img.example.com?q") == plain)
        #expect(HostKey(normalizedURL: "http://img.example.com/a.png") != plain)   // another scheme, another port
        let port = try #require(HostKey(normalizedURL: "https://img.example.com:8443/a.png"))
        #expect(port != plain)
        #expect(port.name == "img.example.com:8443")
        #expect(HostKey(normalizedURL: "not a url") == nil)
        #expect(HostKey(normalizedURL: "http:///path") == nil)
    }

    @Test func aHostKeyReusedForTheNextURLIsTheKeyThatURLWouldGet() {
        // `HostKey.of(normalizedURL:reusing:)` (a batch's run of URLs): after any URL, any other gets
        // exactly the key made for it alone: user info, another port, a longer host, '@' after the host.
        let urls = ["https://img.example.com/a.png", "https://img.example.com", "https://img.example.com?q", "https://img.example.com#f",
                    "https://img.example.com:8443/a", "https://img.example.com.evil/a", "https://img.example.co/a",
                    "https://user@img.example.com/a", "https://user:pw@img.example.com/b", "https://img.example.com@evil.com/a",
                    "http://img.example.com/a", "https://img.example.com/a@b", "https://IMG.example.com/a", "not a url",
                    "http:///path", "https://"]
        for previous in urls {
            for url in urls {
                let alone = HostKey(normalizedURL: url)
                let reused = HostKey.of(normalizedURL: url, reusing: HostKey(normalizedURL: previous))
                #expect(reused == alone, "\(url) after \(previous)")
                #expect(reused?.origin == alone?.origin && reused?.name == alone?.name, "\(url) after \(previous)")
            }
            #expect(HostKey.of(normalizedURL: previous, reusing: nil) == HostKey(normalizedURL: previous))
        }
    }

    @Test func hostKeysAreFoundInTablesByTheirOwnHashNotOneAnother() throws {
        // `_rawHashValue`: 10,000 hosts (one in 32 of them also with user info) in a
        // set and a dictionary, each found, none merged with another.
        let keys = try (0..<10_000).map { try #require(HostKey(normalizedURL: "http://10.0.\($0 / 250).\($0 % 250):8080/a.png")) }
        var positions: [HostKey: Int] = [:]
        for (i, key) in keys.enumerated() { positions[key] = i }
        #expect(positions.count == keys.count)
        #expect(Set(keys).count == keys.count)
        for i in stride(from: 0, to: keys.count, by: 32) {
            let again = try #require(HostKey(normalizedURL: "http://u:p@10.0.\(i / 250).\(i % 250):8080/b.png"))
            #expect(positions[again] == i)
            #expect(again.hashValue == keys[i].hashValue)
        }
        #expect(positions[Self.host("absent.example")] == nil)
    }

    // MARK: Limits

    /// The remote tier's lane (`HostPolicy.lane`) is no host to probe: it runs its own limit
    /// from the first item (a host never connected runs one), within `jobs`, and the summary
    /// does not count it as a host.
    @Test func theLaneRunsItsLimitAtOnceAndIsNoHost() {
        let lane = HostKey(origin: "remote-cache:", name: "remote cache")
        var policy = HostPolicy(jobs: 20, jobsPerHost: 6)
        policy.lane = lane
        policy.laneLimit = 32
        #expect(policy.laneLimit == 32)
        var scheduler = Scheduler(policy: policy)
        func starts(_ actions: [Scheduler.Action], on host: HostKey) -> Int {
            actions.filter { if case .start(_, let key, _) = $0 { key == host } else { false } }.count
        }
        var started = 0
        for item in 0..<40 { started += starts(scheduler.enqueue(item, host: lane, now: 0), on: lane) }
        #expect(started == 20, "the lane runs up to jobs (20) at once, not one")
        var other = 0
        for item in 40..<44 { other += starts(scheduler.enqueue(item, host: Self.a, now: 0), on: Self.a) }
        #expect(other == 0, "jobs bounds the lane and the hosts together")
        #expect(starts(scheduler.finished(host: lane, now: 0), on: Self.a) == 1, "a freed slot goes to a host in turn")
        #expect(scheduler.counts.hosts == 1)
        policy.laneLimit = 2
        #expect(policy.laneLimit == 6, "never below jobsPerHost")
    }

    @Test func limitsAreNeverExceededUnderRandomOutcomes() {
        var random = SeededGenerator(seed: 21)
        var harness = Harness(jobs: 10, perHost: 3)
        let hosts = (0..<25).map { Self.host("h\($0).example") }
        var next = 0
        // Items arrive over time; each running item ends with a random outcome.
        for round in 0..<2000 {
            if next < 3000, random.next() % 3 != 0 {
                harness.enqueue(next, hosts[Int(random.next() % 25)])
                next += 1
            }
            let busy = harness.running.filter { $0.value > 0 }.map(\.key)
            if let host = busy.randomElement(using: &random), random.next() % 2 == 0 {
                let outcomes: [Scheduler.Outcome] = [.answered, .answered, .answered, .answered, .neutral,
                                                     .pushedBack(status: 429, retryAfter: 0.5), .timedOut, .refused]
                harness.complete(host, outcomes[Int(random.next() % UInt64(outcomes.count))])
            }
            harness.advance(to: Double(round) * 0.01)
        }
        #expect(harness.violations == 0)
        #expect(harness.mostOverall == 10)
        #expect(harness.mostAtOnce.values.allSatisfy { $0 <= 3 })
        // Hosts are kept in a Dictionary, whose order changes with the process's
        // hash seed: whether one host reaches all 3 of its slots in this random
        // walk varies from run to run (about 1 in 8 do not), so the walk only
        // asks that hosts ran several at once; the limit is reached in the
        // deterministic tests below.
        #expect(harness.mostAtOnce.values.contains { $0 >= 2 })
    }

    /// A URL's end with its answer in one step (`finished(host:after:)`, what
    /// the batch does) starts, fails and notes exactly what `report` then
    /// `finished` do, under the same random outcomes, pauses and give-ups included.
    @Test func finishedAfterAnOutcomeIsReportThenFinished() {
        var random = SeededGenerator(seed: 22)
        let policy: (inout HostPolicy) -> Void = { $0.giveUpAfter = 4 }
        var twoSteps = Harness(jobs: 10, perHost: 3, configure: policy)
        var oneStep = Harness(jobs: 10, perHost: 3, configure: policy)
        let hosts = (0..<12).map { Self.host("h\($0).example") }
        let outcomes: [Scheduler.Outcome] = [.answered, .answered, .answered, .answered, .neutral,
                                             .pushedBack(status: 429, retryAfter: 0.3), .timedOut, .refused, .unanswered]
        var next = 0
        var completions = 0
        for round in 0..<3000 {
            if next < 4000, random.next() % 3 != 0 {
                let host = hosts[Int(random.next() % UInt64(hosts.count))]
                twoSteps.enqueue(next, host)
                oneStep.enqueue(next, host)
                next += 1
            }
            let busy = twoSteps.running.filter { $0.value > 0 }.map(\.key).sorted { $0.name < $1.name }
            if !busy.isEmpty, random.next() % 2 == 0 {
                let host = busy[Int(random.next() % UInt64(busy.count))]
                let outcome = outcomes[Int(random.next() % UInt64(outcomes.count))]
                let before = (twoSteps.started.count, oneStep.started.count)
                twoSteps.complete(host, outcome)
                oneStep.running[host, default: 0] -= 1
                if oneStep.running[host] == 0 { oneStep.running[host] = nil }
                oneStep.apply(oneStep.scheduler.finished(host: host, after: outcome, now: oneStep.now))
                // The same items start (one fill instead of two: the same set).
                #expect(twoSteps.started[before.0...].map(\.0).sorted() == oneStep.started[before.1...].map(\.0).sorted())
                completions += 1
            }
            twoSteps.advance(to: Double(round) * 0.01)
            oneStep.advance(to: Double(round) * 0.01)
            #expect(twoSteps.scheduler.running == oneStep.scheduler.running)
            #expect(twoSteps.scheduler.queued == oneStep.scheduler.queued)
            // An end answered (or saying nothing) changes its host in place and drops it when
            // nothing is left to remember: the same hosts are held as after two steps.
            #expect(twoSteps.scheduler.hostsHeld == oneStep.scheduler.hostsHeld)
        }
        #expect(completions > 800)
        #expect(oneStep.violations == 0)
        #expect(twoSteps.failed.map(\.0) == oneStep.failed.map(\.0))
        #expect(twoSteps.notes == oneStep.notes)
        #expect(twoSteps.scheduler.counts == oneStep.scheduler.counts)
        #expect(!oneStep.failed.isEmpty && oneStep.notes.contains { if case .paused = $0 { true } else { false } })
    }

    /// Several URLs' ends in one step (`finished(_:now:)`: the 304s a transfer
    /// loop's round gives back, each answered) leave the scheduler where their
    /// ends one by one leave it, from the same state: as many items started,
    /// the same limits grown, never beyond a limit. Which host a freed slot
    /// goes to follows the same turn (below), seen after all the ends.
    @Test func severalEndsInOneStepAreTheirEndsOneByOne() {
        var random = SeededGenerator(seed: 23)
        var harness = Harness(jobs: 10, perHost: 3) { $0.giveUpAfter = 4 }
        let hosts = (0..<12).map { Self.host("h\($0).example") }
        let outcomes: [Scheduler.Outcome?] = [.answered, .answered, .answered, .neutral, nil]
        var next = 0
        var rounds = 0
        for round in 0..<3000 {
            for _ in 0..<Int(random.next() % 3) where next < 5000 {
                harness.enqueue(next, hosts[Int(random.next() % UInt64(hosts.count))])
                next += 1
            }
            var ends: [(host: HostKey, outcome: Scheduler.Outcome?)] = []
            for _ in 0..<Int(random.next() % 5) {
                let busy = hosts.filter { host in (harness.running[host] ?? 0) > ends.filter { $0.host == host }.count }
                guard !busy.isEmpty else { break }
                ends.append((busy[Int(random.next() % UInt64(busy.count))], outcomes[Int(random.next() % UInt64(outcomes.count))]))
            }
            var alone = harness.scheduler
            var aloneActions: [Scheduler.Action] = []
            for end in ends { aloneActions += alone.finished(host: end.host, after: end.outcome, now: harness.now) }
            let actions = harness.scheduler.finished(ends, now: harness.now)
            func starts(_ actions: [Scheduler.Action]) -> Int { actions.filter { if case .start = $0 { true } else { false } }.count }
            func notes(_ actions: [Scheduler.Action]) -> [HostNote] { actions.compactMap { if case .note(let note) = $0 { note } else { nil } } }
            #expect(starts(actions) == starts(aloneActions))
            #expect(notes(actions) == notes(aloneActions))
            #expect(harness.scheduler.running == alone.running)
            #expect(harness.scheduler.queued == alone.queued)
            for end in ends {
                harness.running[end.host, default: 0] -= 1
                if harness.running[end.host] == 0 { harness.running[end.host] = nil }
            }
            harness.apply(actions)
            if ends.count > 1 { rounds += 1 }
            harness.advance(to: Double(round) * 0.01)
        }
        #expect(rounds > 500)
        #expect(harness.violations == 0)
        #expect(harness.mostAtOnce.values.contains(3))
    }

    /// Work of no host (the tier's uploads) takes the same `jobs` slots: lent at once when
    /// one is free, else every other freed slot while hosts have URLs waiting (neither side
    /// waits forever); the URLs never wait for a borrower to give its slot back.
    @Test func borrowersShareTheGlobalSlotsInTurnWithTheHosts() {
        var h = Harness(jobs: 2, perHost: 8)
        h.borrow(100)
        #expect(h.lentTo == [100])   // a free slot: lent at once
        h.enqueue(0..<6, Self.a)
        #expect(h.startedItems(on: Self.a) == [0])   // one slot left for the host
        h.borrow(101)
        h.borrow(102)
        #expect(h.lentTo == [100])   // all taken: they wait
        h.complete(Self.a, .answered)
        #expect(h.lentTo == [100, 101], "the freed slot goes to a borrower")
        #expect(h.startedItems(on: Self.a) == [0])
        h.giveBack()
        #expect(h.startedItems(on: Self.a) == [0, 1], "the next one to the host, though a borrower waits")
        h.giveBack()
        #expect(h.lentTo == [100, 101, 102])
        h.complete(Self.a, .answered)
        #expect(h.startedItems(on: Self.a) == [0, 1, 2])
        h.giveBack()
        #expect(h.startedItems(on: Self.a) == [0, 1, 2, 3], "no borrower waits: the host takes every slot")
        // A cancelled batch drains its waiting borrowers with its queue (each is refused).
        h.borrow(103)
        #expect(h.lentTo.count == 3)
        #expect(h.scheduler.drain().sorted() == [4, 5, 103])
        #expect(h.mostOverall == 2 && h.violations == 0)
    }

    @Test func slotsFreedTogetherGoToTheHostsInTurn() {
        var harness = Self.tenURLsEachOnThreeHosts(jobs: 3)
        #expect(Set(harness.started.map(\.1)) == [Self.a, Self.b, Self.c])
        for _ in 0..<9 {
            let ending = harness.started.suffix(3).map { (host: $0.1, outcome: Scheduler.Outcome?.some(.answered)) }
            for end in ending { harness.running[end.host, default: 0] -= 1 }
            harness.apply(harness.scheduler.finished(ending, now: harness.now))
            // Three slots at once: one to each host, as three ends one by one give them.
            #expect(Set(harness.started.suffix(3).map(\.1)) == [Self.a, Self.b, Self.c])
        }
        #expect(harness.started.count == 30)
        #expect(harness.violations == 0)
    }

    @Test func aURLWaitingForItsHostHoldsNoGlobalSlot() {
        var harness = Harness(jobs: 4, perHost: 2)
        for item in 0..<10 { harness.enqueue(item, Self.a) }
        harness.complete(Self.a, .answered)   // the name resolved: the host may open its 2
        #expect(harness.running[Self.a] == 2)
        harness.enqueue(100, Self.b)
        harness.enqueue(101, Self.c)
        // a's 7 queued URLs wait without a slot: b and c start at once.
        #expect(harness.startedItems(on: Self.b) == [100])
        #expect(harness.startedItems(on: Self.c) == [101])
        #expect(harness.scheduler.running == 4)
        #expect(harness.scheduler.queued == 7)
    }

    @Test func aHostsURLsStartInOrderBackToBack() {
        var harness = Harness(jobs: 8, perHost: 2)
        for item in 0..<6 { harness.enqueue(item, Self.a) }
        harness.complete(Self.a, .answered)
        for _ in 0..<4 { harness.complete(Self.a, .answered) }
        #expect(harness.startedItems(on: Self.a) == [0, 1, 2, 3, 4, 5])
    }

    // MARK: Pick next

    /// Items 0–9 queued for a, 10–19 for b, 20–29 for c, interleaved.
    static func tenURLsEachOnThreeHosts(jobs: Int) -> Harness {
        var harness = Harness(jobs: jobs, perHost: 6)
        for item in 0..<10 {
            harness.enqueue(item, a)
            harness.enqueue(10 + item, b)
            harness.enqueue(20 + item, c)
        }
        return harness
    }

    @Test func hostsWithEqualWorkAreServedInTurn() {
        var harness = Self.tenURLsEachOnThreeHosts(jobs: 1)
        for _ in 0..<29 { harness.complete(harness.started.last!.1, .answered) }
        let order = harness.started.map(\.1)
        #expect(order.count == 30)
        // At every point, no host is more than two starts ahead of another.
        var counts: [HostKey: Int] = [Self.a: 0, Self.b: 0, Self.c: 0]
        for host in order {
            counts[host, default: 0] += 1
            #expect(counts.values.max()! - counts.values.min()! <= 2, "\(order.map(\.name))")
        }
        #expect(harness.violations == 0)
    }

    @Test func theBusiestHostsSlotsFillFromTheStart() {
        var harness = Harness(jobs: 16, perHost: 6)
        let small = (0..<40).map { Self.host("small\($0).example") }
        for (index, host) in small.enumerated() { harness.enqueue(index, host) }   // listed first: 16 start
        let big = Self.host("big.example")
        for item in 1000..<1300 { harness.enqueue(item, big) }
        // Of the next starts, every other goes to the big host: its probe first…
        for host in small.prefix(2) { harness.complete(host, .answered) }
        #expect(harness.running[big] == 1)
        harness.complete(big, .answered)
        // …then its other slots, long before the 24 small hosts still waiting have all started.
        for host in small.prefix(16).dropFirst(2) where harness.running[host] == 1 { harness.complete(host, .answered) }
        #expect(harness.running[big] == 6)
        #expect(small.filter { harness.startedItems(on: $0).isEmpty }.count >= 10)
        #expect(harness.violations == 0)
    }

    @Test func oneHugeHostDoesNotStarveTheRest() {
        // Even with the global limit below the host limit, small hosts start
        // every other turn: not after the huge host's 1,000 URLs.
        var harness = Harness(jobs: 2, perHost: 6)
        let huge = Self.host("huge.example")
        for item in 0..<1000 { harness.enqueue(item, huge) }
        harness.complete(huge, .answered)
        let small = (0..<10).map { Self.host("s\($0).example") }
        for (index, host) in small.enumerated() { harness.enqueue(5000 + index, host) }
        var steps = 0
        while small.contains(where: { harness.startedItems(on: $0).isEmpty }) && steps < 100 {
            let host = harness.running.first { $0.value > 0 }!.key
            harness.complete(host, .answered)
            steps += 1
        }
        #expect(small.allSatisfy { !harness.startedItems(on: $0).isEmpty })
        #expect(harness.startedItems(on: huge).count <= 25)
    }

    // MARK: Pause

    @Test func a429PausesOnlyThatHostForItsRetryAfter() {
        var harness = Harness(jobs: 8, perHost: 2)
        for item in 0..<5 {
            harness.enqueue(item, Self.a)
            harness.enqueue(10 + item, Self.b)
        }
        harness.complete(Self.a, .answered)
        harness.complete(Self.b, .answered)
        let aStarted = harness.startedItems(on: Self.a).count
        harness.now = 1
        harness.complete(Self.a, .pushedBack(status: 429, retryAfter: 3), requeue: 1)
        #expect(harness.notes.contains(.paused(Self.a, seconds: 3, status: 429)))
        #expect(harness.scheduler.isPaused(Self.a, now: 1))
        #expect(!harness.scheduler.isPaused(Self.b, now: 1))
        #expect(harness.scheduler.nextWake == 4)
        // b goes on; a starts nothing during its pause.
        harness.complete(Self.b, .answered)
        harness.advance(to: 3.9)
        harness.complete(Self.a, .answered)   // the one in flight when the 429 came
        #expect(harness.startedItems(on: Self.a).count == aStarted)
        #expect(harness.startedItems(on: Self.b).count == 4)
        harness.advance(to: 4)
        // The pushed-back URL goes first again.
        #expect(Array(harness.startedItems(on: Self.a).dropFirst(aStarted)) == [1])
        #expect(harness.scheduler.counts.hostsPaused == 1)
    }

    /// `-v` said "host … answered 503: paused for 2.00 s" after a host's
    /// last URL failed with its 503 (no retry left), when nothing waited on
    /// the pause. It is said when a URL waits: one queued then, one put back
    /// to retry, or one that comes while the pause lasts; the pause is counted all the same.
    @Test func aPauseIsAnnouncedOnlyWhenAURLWaitsOnIt() {
        var harness = Harness(jobs: 8, perHost: 2)
        harness.enqueue(0, Self.a)
        harness.complete(Self.a, .pushedBack(status: 503, retryAfter: 2))
        #expect(harness.notes.isEmpty, "\(harness.notes)")
        #expect(harness.scheduler.isPaused(Self.a, now: 0) && harness.scheduler.counts.hostsPaused == 1)
        harness.now = 1
        harness.enqueue(1, Self.a)   // read from the list during the pause: it waits
        #expect(harness.notes == [.paused(Self.a, seconds: 1, status: 503)], "what is left of the 2 s pause, 1 s in")
        harness.advance(to: 2)
        #expect(harness.startedItems(on: Self.a) == [0, 1])

        var retried = Harness(jobs: 8, perHost: 2)
        retried.enqueue(0, Self.b)
        retried.apply(retried.scheduler.report(.pushedBack(status: 429, retryAfter: 1), host: Self.b, requeueing: true, now: 0))
        #expect(retried.notes.first == .paused(Self.b, seconds: 1, status: 429), "said before the limit it halves: \(retried.notes)")
        retried.running[Self.b] = nil
        retried.apply(retried.scheduler.finished(host: Self.b, requeue: 0, now: 0))
        #expect(retried.notes.filter { if case .paused = $0 { true } else { false } }.count == 1, "once: \(retried.notes)")

        var over = Harness(jobs: 8, perHost: 2)
        over.enqueue(0, Self.b)
        over.complete(Self.b, .pushedBack(status: 503, retryAfter: 1))
        over.advance(to: 1.5)
        over.enqueue(1, Self.b)   // the pause is over: nothing to say
        #expect(over.notes.isEmpty, "\(over.notes)")
    }

    /// A 429 whose pause note waited for a URL (above) halves the limit at
    /// once; `-v` said the halving first and the pause it came from after,
    /// when a URL came. The notes come as the events happened: the pause,
    /// then the limit; and a halving whose pause is never said is said before the
    /// limit's next change.
    @Test func aDelayedPauseNoteComesBeforeTheLimitItHalved() {
        var harness = Harness(jobs: 8, perHost: 2)
        harness.enqueue(0, Self.a)
        harness.complete(Self.a, .pushedBack(status: 429, retryAfter: 2))
        #expect(harness.notes.isEmpty, "\(harness.notes)")
        #expect(harness.scheduler.limit(of: Self.a) == 1)
        harness.now = 1
        harness.enqueue(1, Self.a)
        #expect(harness.notes == [.paused(Self.a, seconds: 1, status: 429), .limitChanged(Self.a, from: 2, to: 1)],
                "\(harness.notes)")

        var unsaid = Harness(jobs: 8, perHost: 2) { $0.growAfter = 1 }
        unsaid.enqueue(0, Self.b)
        unsaid.complete(Self.b, .pushedBack(status: 429, retryAfter: 1))
        unsaid.advance(to: 2)   // the pause is over, said to nobody
        unsaid.enqueue(1, Self.b)
        unsaid.complete(Self.b, .answered)
        #expect(unsaid.notes == [.limitChanged(Self.b, from: 2, to: 1), .limitChanged(Self.b, from: 1, to: 2)], "\(unsaid.notes)")
    }

    @Test func theNextWakeFollowsPausesThroughTheirEndAndAGiveUp() {
        var harness = Harness(jobs: 8, perHost: 2)
        for (index, host) in [Self.a, Self.b].enumerated() {
            harness.enqueue(index * 10..<index * 10 + 6, host)
            harness.complete(host, .answered)
        }
        #expect(harness.scheduler.nextWake == nil)
        harness.complete(Self.a, .pushedBack(status: 429, retryAfter: 2), requeue: 1)
        harness.complete(Self.b, .pushedBack(status: 503, retryAfter: 1), requeue: 11)
        #expect(harness.scheduler.nextWake == 1)
        harness.advance(to: 1.5)   // b's pause is over: only a's is waited for
        #expect(harness.scheduler.nextWake == 2)
        #expect(harness.startedItems(on: Self.b).contains(11))
        // a, still paused, is given up on (its one transfer in flight is refused, three times in a row): nothing to wake for.
        harness.complete(Self.a, .refused)
        #expect(harness.scheduler.failure(of: Self.a) == nil)
        harness.apply(harness.scheduler.report(.refused, host: Self.a, now: 1.5))
        harness.apply(harness.scheduler.report(.refused, host: Self.a, now: 1.5))
        #expect(harness.scheduler.failure(of: Self.a) != nil)
        #expect(harness.scheduler.nextWake == nil)
    }

    @Test func pausesAreCappedAndBackOffExponentiallyWithoutRetryAfter() {
        var policy = HostPolicy(jobs: 8, jobsPerHost: 6)
        policy.pauseBase = 1
        policy.pauseMax = 30
        #expect(policy.pauseSeconds(retryAfter: 7, pushbacksInARow: 1) == 7)
        #expect(policy.pauseSeconds(retryAfter: 3600, pushbacksInARow: 1) == 30)
        #expect(policy.pauseSeconds(retryAfter: -5, pushbacksInARow: 1) == 0)
        #expect((1...6).map { policy.pauseSeconds(retryAfter: nil, pushbacksInARow: $0) } == [1, 2, 4, 8, 16, 30])
        #expect(policy.pauseSeconds(retryAfter: nil, pushbacksInARow: 500) == 30)
    }

    /// An answer that comes during a pause (its transfer started before the
    /// pause) and asks for a longer wait extends the pause, without counting
    /// as another pushback in a row: a 429 with Retry-After 1 and a 503 with
    /// Retry-After 100 together went on after 1 s.
    @Test func aLongerRetryAfterDuringAPauseExtendsIt() {
        var harness = Harness(jobs: 8, perHost: 3)
        for item in 0..<6 { harness.enqueue(item, Self.a) }
        harness.complete(Self.a, .answered)   // three in flight
        let before = harness.startedItems(on: Self.a).count
        harness.complete(Self.a, .pushedBack(status: 429, retryAfter: 1), requeue: 1)
        #expect(harness.scheduler.nextWake == 1)
        harness.now = 0.5
        harness.complete(Self.a, .pushedBack(status: 429, retryAfter: 0.2), requeue: 2)   // shorter: no change
        #expect(harness.scheduler.nextWake == 1)
        harness.complete(Self.a, .pushedBack(status: 503, retryAfter: 100))
        #expect(harness.notes.last == .paused(Self.a, seconds: 30, status: 503), "capped like any pause")
        #expect(harness.scheduler.nextWake == 30.5)
        harness.advance(to: 1)
        #expect(harness.scheduler.isPaused(Self.a, now: 1))
        #expect(harness.startedItems(on: Self.a).count == before)
        harness.advance(to: 30.5)
        #expect(harness.startedItems(on: Self.a).count == before + 1, "one at a time: the limit was halved")
        #expect(harness.scheduler.limit(of: Self.a) == 1, "halved once (3 to 1), for the first 429 only")
        #expect(harness.scheduler.counts.hostsPaused == 1)
    }

    @Test func pushbacksInARowLengthenThePause() {
        var harness = Harness(jobs: 8, perHost: 1)
        for item in 0..<5 { harness.enqueue(item, Self.a) }
        harness.complete(Self.a, .pushedBack(status: 503, retryAfter: nil), requeue: 0)
        harness.advance(to: 1)
        harness.complete(Self.a, .pushedBack(status: 503, retryAfter: nil), requeue: 0)
        #expect(harness.scheduler.nextWake == 3)
        harness.advance(to: 3)
        harness.complete(Self.a, .answered)   // an answer ends the run
        harness.complete(Self.a, .pushedBack(status: 503, retryAfter: nil), requeue: 1)
        #expect(harness.scheduler.nextWake == 4)
        // A 503 pauses without changing the limit.
        #expect(!harness.notes.contains { if case .limitChanged = $0 { true } else { false } })
    }

    // MARK: Adapt

    @Test func a429HalvesTheLimitOncePerPauseAndAnswersGrowItBack() {
        var harness = Harness(jobs: 32, perHost: 6) { $0.growAfter = 4 }
        for item in 0..<200 { harness.enqueue(item, Self.a) }
        harness.complete(Self.a, .answered)
        #expect(harness.running[Self.a] == 6)
        harness.complete(Self.a, .pushedBack(status: 429, retryAfter: 1), requeue: 1)
        // The other five were started before the pause: their 429s do not halve again.
        for _ in 0..<5 { harness.complete(Self.a, .pushedBack(status: 429, retryAfter: 1), requeue: 2) }
        #expect(harness.scheduler.limit(of: Self.a) == 3)
        #expect(harness.notes.filter { if case .limitChanged = $0 { true } else { false } } == [.limitChanged(Self.a, from: 6, to: 3)])
        harness.advance(to: 1)
        #expect(harness.running[Self.a] == 3)
        harness.complete(Self.a, .pushedBack(status: 429, retryAfter: 1))
        #expect(harness.scheduler.limit(of: Self.a) == 1)
        harness.advance(to: 2)
        // Every 4 answers in a row: one more, up to 6.
        var limits: [Int] = []
        for _ in 0..<24 {
            let host = harness.running.first { $0.value > 0 }!.key
            harness.complete(host, .answered)
            limits.append(harness.scheduler.limit(of: Self.a))
        }
        #expect(limits.first == 1)
        #expect(limits[3] == 2)
        #expect(limits.last == 6)
        #expect(harness.mostAtOnce[Self.a]! <= 6)
        #expect(harness.notes.contains(.limitChanged(Self.a, from: 5, to: 6)))
    }

    @Test func adaptIsAPureFunction() {
        let policy = HostPolicy(jobs: 8, jobsPerHost: 6)
        #expect(policy.limit(6, afterPushback: 429) == 3)
        #expect(policy.limit(1, afterPushback: 429) == 1)
        #expect(policy.limit(6, afterPushback: 503) == 6)
        #expect(policy.limit(3, afterAnswers: Defaults.hostGrowAfter) == 4)
        #expect(policy.limit(3, afterAnswers: Defaults.hostGrowAfter - 1) == 3)
        #expect(policy.limit(6, afterAnswers: Defaults.hostGrowAfter) == 6)
    }

    // MARK: Give up

    @Test func threeTimeoutsInARowGiveTheHostUp() {
        var harness = Harness(jobs: 8, perHost: 3)
        for item in 0..<10 { harness.enqueue(item, Self.a) }
        harness.complete(Self.a, .answered)
        harness.complete(Self.a, .timedOut)
        harness.complete(Self.a, .timedOut)
        #expect(harness.failed.isEmpty)
        harness.complete(Self.a, .timedOut)
        let message = "host a.example gave 3 timeouts in a row; not tried again in this run"
        // Every queued URL fails at once, with the same kind and the reason.
        #expect(harness.failed.count == 10 - harness.started.count)
        #expect(harness.failed.allSatisfy { $0.2 == HostFailure(kind: .timeout, message: message) })
        #expect(harness.notes.contains(.gaveUp(Self.a, HostFailure(kind: .timeout, message: message))))
        // Later URLs fail without a slot; pushed-back ones too.
        harness.enqueue(99, Self.a)
        #expect(harness.failed.last?.0 == 99)
        #expect(harness.scheduler.failure(of: Self.a)?.message == message)
        #expect(harness.scheduler.counts.hostsGivenUp == 1)
        #expect(harness.scheduler.queued == 0)
    }

    @Test func anAnswerBreaksTheStreakAndMixedFailuresSaySo() {
        var harness = Harness(jobs: 8, perHost: 1)
        for item in 0..<10 { harness.enqueue(item, Self.a) }
        harness.complete(Self.a, .timedOut)
        harness.complete(Self.a, .timedOut)
        harness.complete(Self.a, .answered)
        harness.complete(Self.a, .timedOut)
        harness.complete(Self.a, .refused)
        #expect(harness.failed.isEmpty)
        harness.complete(Self.a, .refused)
        #expect(harness.failed.first?.2 == HostFailure(
            kind: .connect, message: "host a.example gave 3 connect failures or timeouts in a row; not tried again in this run"))
        #expect(HostPolicy.giveUp(host: Self.b, timeouts: 0, refusals: 3, last: .connect).message
            == "host b.example gave 3 connect failures in a row; not tried again in this run")
    }

    @Test func aHostThatNeverAnswersIsGivenUpOnAfterItsFirstTimeoutsWhichStartTogether() {
        var harness = Harness(jobs: 8, perHost: 6)
        for item in 0..<10 { harness.enqueue(item, Self.a) }
        harness.apply(harness.scheduler.report(.connected, host: Self.a, now: 0))
        // It accepts connections and never answers: three run at once, and their timeouts give it up.
        #expect(harness.running[Self.a] == Defaults.hostGiveUpAfter)
        harness.complete(Self.a, .unanswered)
        harness.complete(Self.a, .unanswered)
        #expect(harness.scheduler.failure(of: Self.a) == nil)   // several in a row (SPEC §6), not the first
        harness.complete(Self.a, .unanswered)
        let failure = HostFailure(kind: .timeout, message: "host a.example gave 3 timeouts in a row; not tried again in this run")
        #expect(harness.scheduler.failure(of: Self.a) == failure)
        #expect(harness.failed.count == 10 - harness.started.count)
        #expect(harness.failed.allSatisfy { $0.2 == failure })
        #expect(harness.notes.contains(.gaveUp(Self.a, failure)))
        #expect(harness.scheduler.counts.hostsGivenUp == 1)
        // Refusals are quick: a host that refuses has its 3 in a row, answered or not.
        for item in 20..<30 { harness.enqueue(item, Self.b) }
        harness.complete(Self.b, .refused)
        harness.complete(Self.b, .refused)
        #expect(harness.scheduler.failure(of: Self.b) == nil)
        harness.complete(Self.b, .refused)
        #expect(harness.scheduler.failure(of: Self.b)?.message == "host b.example gave 3 connect failures in a row; not tried again in this run")
    }

    /// A host that accepts connections and closes or resets them before any
    /// byte of an answer is given up on like one that refuses them: its closes
    /// are connect failures, it never counts as answering (a few at once), and
    /// the message says what it did.
    @Test func aHostThatClosesConnectionsBeforeAnsweringIsGivenUpOn() {
        var harness = Harness(jobs: 8, perHost: 6)
        harness.enqueue(0..<10, Self.a)
        harness.enqueue(20..<23, Self.b)
        harness.complete(Self.a, .closed)
        // It connected: a few at once, not its whole limit (it has not answered).
        #expect(harness.running[Self.a] == Defaults.hostUnansweredLimit)
        harness.complete(Self.a, .closed)
        #expect(harness.scheduler.failure(of: Self.a) == nil)   // several in a row (SPEC §6), not the first
        harness.complete(Self.a, .closed)
        let failure = HostFailure(
            kind: .connect, message: "host a.example closed 3 connections in a row before answering; not tried again in this run")
        #expect(harness.scheduler.failure(of: Self.a) == failure)
        #expect(harness.failed.count == 10 - harness.startedItems(on: Self.a).count)
        #expect(harness.failed.allSatisfy { $0.1 == Self.a && $0.2 == failure })
        #expect(harness.notes == [.gaveUp(Self.a, failure)])
        #expect(harness.scheduler.counts.hostsGivenUp == 1)
        harness.enqueue(99, Self.a)
        #expect(harness.failed.last?.0 == 99)
        // The other host is not touched.
        #expect(harness.scheduler.failure(of: Self.b) == nil && harness.startedItems(on: Self.b) == [20] && harness.scheduler.queued(on: Self.b) == 2)
    }

    @Test func closesCountAsConnectFailuresAndAnAnswerBreaksTheirStreak() {
        var harness = Harness(jobs: 8, perHost: 1)
        harness.enqueue(0..<20, Self.a)
        harness.complete(Self.a, .closed)
        harness.complete(Self.a, .closed)
        harness.complete(Self.a, .answered)   // a reset after its answer began is an answer
        harness.complete(Self.a, .closed)
        harness.complete(Self.a, .closed)
        #expect(harness.failed.isEmpty)
        harness.complete(Self.a, .refused)
        #expect(harness.scheduler.failure(of: Self.a)?.message
            == "host a.example gave 3 connect failures in a row; not tried again in this run")
        #expect(HostPolicy.giveUp(host: Self.b, timeouts: 1, refusals: 0, closes: 2, last: .connect).message
            == "host b.example gave 3 connect failures or timeouts in a row; not tried again in this run")
        #expect(HostPolicy.giveUp(host: Self.b, timeouts: 2, refusals: 0, closes: 1, last: .timeout)
            == HostFailure(kind: .timeout, message: "host b.example gave 3 connect failures or timeouts in a row; not tried again in this run"))
        // A close in a streak is remembered with nothing queued or running: a later URL goes on from it.
        harness.enqueue(50, Self.c)
        harness.complete(Self.c, .closed)
        #expect(harness.scheduler.hostsHeld == 2)   // a, given up on, and c
        harness.enqueue(51, Self.c)
        harness.complete(Self.c, .closed)
        harness.enqueue(52, Self.c)
        harness.complete(Self.c, .closed)
        #expect(harness.scheduler.failure(of: Self.c)?.message
            == "host c.example closed 3 connections in a row before answering; not tried again in this run")
    }

    @Test func aHostThatHasAnsweredGetsThreeSilentTimeoutsInARow() {
        var harness = Harness(jobs: 8, perHost: 3)
        harness.enqueue(0..<10, Self.a)
        harness.enqueue(20..<30, Self.b)
        harness.complete(Self.a, .answered)
        harness.complete(Self.a, .unanswered)
        harness.complete(Self.a, .unanswered)
        #expect(harness.scheduler.failure(of: Self.a) == nil)
        harness.complete(Self.a, .unanswered)
        #expect(harness.scheduler.failure(of: Self.a)?.message == "host a.example gave 3 timeouts in a row; not tried again in this run")
        // An answer that started and then timed out (a slow body) is an answer: b is slow, not silent.
        harness.complete(Self.b, .timedOut)
        harness.complete(Self.b, .unanswered)
        #expect(harness.scheduler.failure(of: Self.b) == nil)
    }

    @Test func aHostRunsAFewTransfersUntilItsFirstAnswer() {
        var harness = Harness(jobs: 16, perHost: 6)
        for item in 0..<20 { harness.enqueue(item, Self.a) }
        #expect(harness.running[Self.a] == 1)   // until its name resolves
        harness.apply(harness.scheduler.report(.connected, host: Self.a, now: 0))
        #expect(harness.running[Self.a] == Defaults.hostUnansweredLimit)   // until it answers
        harness.complete(Self.a, .answered)
        #expect(harness.running[Self.a] == 6)
        let policy = HostPolicy(jobs: 64, jobsPerHost: 6)
        #expect(policy.startLimit(limit: 6, resolved: false, answered: false) == 1)
        #expect(policy.startLimit(limit: 6, resolved: true, answered: false) == 3)
        #expect(policy.startLimit(limit: 2, resolved: true, answered: false) == 2)
        #expect(policy.startLimit(limit: 6, resolved: true, answered: true) == 6)
    }

    @Test func aResponseThatBeginsOpensTheHostBeforeItsBodyEnds() {
        var harness = Harness(jobs: 16, perHost: 6)
        for item in 0..<20 { harness.enqueue(item, Self.a) }
        harness.apply(harness.scheduler.report(.connected, host: Self.a, now: 0))
        #expect(harness.running[Self.a] == Defaults.hostUnansweredLimit)
        // A status line came; the body is still on its way (a large or slow image).
        harness.apply(harness.scheduler.report(.responding, host: Self.a, now: 0))
        #expect(harness.running[Self.a] == 6)
        // It has answered: a later silent timeout is one of three, not the end of the host.
        harness.complete(Self.a, .unanswered)
        #expect(harness.scheduler.failure(of: Self.a) == nil)
    }

    /// The dispatch skips reports that change nothing (each URL's connection
    /// and response, once its host is known): they must really change nothing.
    @Test func onlyAKnownHostsConnectionAndResponseChangeNothing() {
        var harness = Harness(jobs: 16, perHost: 6)
        for item in 0..<20 { harness.enqueue(item, Self.a) }
        #expect(!harness.scheduler.changesNothing(.connected, host: Self.a))
        #expect(!harness.scheduler.changesNothing(.connected, host: Self.b))   // no state at all
        harness.apply(harness.scheduler.report(.connected, host: Self.a, now: 0))
        #expect(harness.scheduler.changesNothing(.connected, host: Self.a))
        #expect(!harness.scheduler.changesNothing(.responding, host: Self.a))   // it opens the host's other slots
        harness.apply(harness.scheduler.report(.responding, host: Self.a, now: 0))
        #expect(harness.scheduler.changesNothing(.responding, host: Self.a))
        #expect(harness.scheduler.report(.responding, host: Self.a, now: 0).isEmpty)
        #expect(harness.running[Self.a] == 6)
        for outcome: Scheduler.Outcome in [.answered, .refused, .closed, .timedOut, .unanswered, .unresolved, .neutral] {
            #expect(!harness.scheduler.changesNothing(outcome, host: Self.a), "\(outcome)")
        }
    }

    /// What a started item is told of its host (`startFacts`) is what `changesNothing(.responding)`
    /// and `queued(on:)` say, through a host's life: unknown, answering, drained, forgotten.
    @Test func aStartIsToldWhetherItsHostAnswersAndHasMoreQueued() {
        var harness = Harness(jobs: 4, perHost: 2)
        func facts(_ host: HostKey) -> (known: Bool, queued: Bool) {
            (harness.scheduler.changesNothing(.responding, host: host), harness.scheduler.queued(on: host) > 0)
        }
        #expect(harness.scheduler.startFacts(on: Self.a) == (false, false))   // no state at all
        harness.enqueue(0..<5, Self.a)
        #expect(harness.scheduler.startFacts(on: Self.a) == facts(Self.a))
        #expect(harness.scheduler.startFacts(on: Self.a) == (false, true))
        harness.apply(harness.scheduler.report(.responding, host: Self.a, now: 0))
        #expect(harness.scheduler.startFacts(on: Self.a) == (true, true))
        while let running = harness.running[Self.a], running > 0 {
            harness.running[Self.a] = running - 1
            harness.apply(harness.scheduler.finished(host: Self.a, after: .answered, now: 0))
            #expect(harness.scheduler.startFacts(on: Self.a) == facts(Self.a))
        }
        #expect(harness.startedItems(on: Self.a) == Array(0..<5))
        #expect(harness.scheduler.running == 0 && harness.scheduler.queued == 0)
        #expect(harness.scheduler.hostsHeld == 0)   // nothing to remember: dropped at its last end
        #expect(harness.scheduler.startFacts(on: Self.a) == (false, false))
    }

    @Test func aNameThatDoesNotResolveCostsOneLookup() {
        var harness = Harness(jobs: 8, perHost: 6)
        for item in 0..<5 { harness.enqueue(item, Self.a) }
        harness.enqueue(50, Self.b)
        // Until its name has resolved, a host runs one transfer.
        #expect(harness.startedItems(on: Self.a) == [0])
        harness.complete(Self.a, .unresolved)
        #expect(harness.failed.map(\.0) == [1, 2, 3, 4])
        #expect(harness.failed.allSatisfy { $0.2.kind == .dns && $0.2.message == "host a.example did not resolve; not tried again in this run" })
        harness.enqueue(6, Self.a)
        #expect(harness.failed.last?.0 == 6)
        #expect(harness.startedItems(on: Self.a) == [0])
        #expect(harness.startedItems(on: Self.b) == [50])
    }

    @Test func aConnectionMadeOpensTheHostBeforeItsFirstAnswer() {
        var harness = Harness(jobs: 8, perHost: 3)
        for item in 0..<6 { harness.enqueue(item, Self.a) }
        #expect(harness.running[Self.a] == 1)
        harness.apply(harness.scheduler.report(.connected, host: Self.a, now: 0))
        #expect(harness.running[Self.a] == 3)
    }

    @Test func aStartSaysHowLongTheItemWasFirstInLine() {
        var scheduler = Scheduler(policy: HostPolicy(jobs: 1, jobsPerHost: 1))
        var waits: [Int: Double] = [:]
        func record(_ actions: [Scheduler.Action]) {
            for case .start(let item, _, let waited) in actions { waits[item] = waited }
        }
        for item in 0..<3 { record(scheduler.enqueue(item, host: Self.a, now: 0)) }
        record(scheduler.report(.answered, host: Self.a, now: 0.5))
        record(scheduler.finished(host: Self.a, now: 0.5))
        record(scheduler.finished(host: Self.a, now: 1.0))
        // Item 2 waited only behind item 1 (from 0.5), not behind item 0 too.
        #expect(waits == [0: 0, 1: 0.5, 2: 0.5])
    }

    // MARK: Memory and cancellation

    @Test func memoryStaysFlatInHosts() {
        var harness = Harness(jobs: 16, perHost: 6)
        var mostHeld = 0
        for item in 0..<10_000 {
            harness.enqueue(item, Self.host("h\(item).example"))
            mostHeld = max(mostHeld, harness.scheduler.hostsHeld)
            if harness.scheduler.running == 16 {
                let host = harness.running.first { $0.value > 0 }!.key
                harness.complete(host, .answered)
            }
        }
        while let host = harness.running.first(where: { $0.value > 0 })?.key { harness.complete(host, .answered) }
        #expect(harness.started.count == 10_000)
        #expect(mostHeld <= 17)
        #expect(harness.scheduler.hostsHeld == 0)
        #expect(harness.scheduler.counts.hosts == 10_000)
    }

    @Test func drainReturnsEveryQueuedItemWhilePaused() {
        var harness = Harness(jobs: 8, perHost: 2)
        for item in 0..<6 {
            harness.enqueue(item, Self.a)
            harness.enqueue(10 + item, Self.b)
        }
        harness.complete(Self.a, .pushedBack(status: 429, retryAfter: 30), requeue: 0)
        #expect(harness.scheduler.activity(now: 0) == (active: 1, paused: 1))
        let drained = harness.scheduler.drain()
        #expect(Set(drained).union(harness.started.map(\.0)).count == 12)
        #expect(harness.scheduler.queued == 0)
        #expect(harness.scheduler.nextWake == nil)
    }
}

/// A seeded generator (Knuth's MMIX linear congruential step, high bits),
/// so that a failure repeats.
private struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state ^ (state >> 29)
    }
}
