import Loader
import Testing

/// The usage checks of a run's settings (`RunSettings.usageProblem`): what
/// the tool says before a run starts, for settings a Swift program builds
/// too. Known values in, the first problem out; only `--cacert` reads a file.
@Suite struct RunSettingsUsageTests {
    private func settings(_ change: (inout RunSettings) -> Void) -> RunSettings {
        var settings = RunSettings()
        settings.urls = ["http://127.0.0.1:9/x.png"]
        change(&settings)
        return settings
    }

    @Test func settingsThatCanRunHaveNoProblem() {
        #expect(settings { _ in }.usageProblem()?.message == nil)
        #expect(settings { $0.output = "cat.png"; $0.header = ["Accept: image/png", "X-Empty;"] }.usageProblem()?.message == nil)
        #expect(settings { $0.outputDir = "photos"; $0.name = "{host}/{name}"; $0.link = true }.usageProblem()?.message == nil)
        // No URL is the caller's to word (the tool says how to give one).
        #expect(RunSettings().usageProblem()?.message == nil)
    }

    @Test func eachSlipIsAUsageProblemWithItsSentence() {
        let cases: [(RunSettings, String)] = [
            (settings { $0.offline = true; $0.refresh = true }, "--offline and --refresh contradict each other"),
            (settings { $0.jobs = 0 }, "--jobs must be at least 1"),
            (settings { $0.jobsPerHost = 0 }, "--jobs-per-host must be at least 1"),
            (settings { $0.retries = -1 }, "--retries must be 0 or more"),
            (settings { $0.output = "" }, "-o/--output is empty"),
            (settings { $0.outputDir = "" }, "--output-dir is empty"),
            (settings { $0.input = [""] }, RunSettings.emptyInput),
            (settings { $0.outputDir = "d"; $0.name = "" }, "--name is empty"),
            (settings { $0.cacert = "" }, "--cacert is empty"),
            (settings { $0.output = "a"; $0.urls.append("http://127.0.0.1:9/y.png") }, "-o/--output takes exactly one URL"),
            (settings { $0.output = "a"; $0.shard = Shard(index: 0, count: 2) }, "-o/--output and --shard exclude each other"),
            (settings { $0.output = "a"; $0.outputDir = "d" }, "-o FILE and --output-dir DIR exclude each other"),
            (settings { $0.link = true }, "--link works with --output-dir DIR (-P DIR) or -O"),
            (settings { $0.name = "{name}" }, "--name works with --output-dir DIR"),
            (settings { $0.outputDir = "d"; $0.name = "{nope}" }, "{nope}"),
            (settings { $0.header = ["Bad Name: x"] }, "-H expects 'Name: value', got 'Bad Name: x'"),
            (settings { $0.userAgent = "bot\r\nX: 1" }, "--user-agent takes one line, without a line break: got 'bot\\r\\nX: 1'"),
        ]
        for (settings, message) in cases {
            let problem = settings.usageProblem()
            #expect(problem?.kind == .usage, "\(message)")
            #expect(problem?.message.hasPrefix(message) == true || problem?.message.contains(message) == true,
                    "\(message): \(problem?.message ?? "none")")
        }
    }

    /// A CA file that cannot be read is the machine's problem (`io`, with its path), not a slip.
    @Test func anUnreadableCAFileIsAnIOProblemNamingIt() {
        let problem = settings { $0.cacert = "/no/such/ca.pem" }.usageProblem()
        #expect(problem?.kind == .io && problem?.path == "/no/such/ca.pem")
        #expect(problem?.message.hasPrefix("cannot read --cacert /no/such/ca.pem: ") == true, "\(problem?.message ?? "none")")
    }
}
