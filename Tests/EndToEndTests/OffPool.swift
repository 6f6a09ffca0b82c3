import Foundation
import TestSupport

/// Runs blocking work (waiting for a child process) on a thread of its own.
/// A test that blocks holds one of the threads of Swift's cooperative pool
/// (two on a 2-core machine) and starves the tasks of tests running beside
/// it: seen here, a FetchClient test whose transfer never started while two
/// end-to-end tests waited for their children. Assertions stay in the
/// calling task, where Swift Testing attributes them.
func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.start()
    }
}

/// `runProcess` off the cooperative pool.
func runProcessOffPool(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                       stdin: [UInt8]? = nil, timeout: Double = 60) async throws -> ProcessResult {
    try await offPool { try runProcess(executable, arguments, environment: environment, stdin: stdin, timeout: timeout) }
}

extension CLI {
    /// `run` off the cooperative pool (the overload an async test picks).
    func run(_ arguments: [String], environment: [String: String] = [:], stdin: [UInt8]? = nil,
             timeout: Double = 60) async throws -> ProcessResult {
        let cli = self
        return try await offPool { try cli.run(arguments, environment: environment, stdin: stdin, timeout: timeout) }
    }

    /// `runInTerminal` off the cooperative pool.
    func runInTerminal(_ arguments: [String], shellTail: String = "", environment: [String: String] = [:],
                       timeout: Double = 60) async throws -> ProcessResult {
        let cli = self
        return try await offPool {
            try cli.runInTerminal(arguments, shellTail: shellTail, environment: environment, timeout: timeout)
        }
    }
}

extension SpawnedProcess {
    /// `wait()` off the cooperative pool.
    func finish() async throws -> ProcessResult {
        try await offPool { self.wait() }
    }

    /// `waitForOutput` off the cooperative pool.
    func awaitOutput(_ text: String, inStderr: Bool = false, timeout: Double) async throws -> Bool {
        try await offPool { self.waitForOutput(text, inStderr: inStderr, timeout: timeout) }
    }
}
