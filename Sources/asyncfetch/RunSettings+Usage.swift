import Loader

/// The usage checks of a run's settings (`RunSettings.usageProblem`, Loader),
/// as the command line says them.
extension RunSettings {
    /// They run at the start of the run, not in `validate()`:
    /// swift-argument-parser calls `validate()` before it reports unknown
    /// options, and `asyncfetch --bogus` must say "Unknown option", not
    /// "no URL given".
    func checkUsage() throws {
        if urls.isEmpty && input.isEmpty { throw UsageError.noURLGiven }
        guard let problem = usageProblem() else { return }
        // `-o run.log -i urls.txt`: wget's log file, refused as -o.
        if problem.message.hasPrefix("-o"), let log = HabitHints.logFile(output: output) {
            throw UsageError(problem.message + " (\(log))")
        }
        throw UsageError(problem)
    }
}
