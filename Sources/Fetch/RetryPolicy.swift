import Support

/// When to try again, and how long to wait first.
struct RetryPolicy: Sendable {
    let retries: Int
    let baseDelay: Double
    let maxDelay: Double

    /// The configuration's delays as a sleep can take them: NaN or below 0
    /// means 0, above `longestDelay` (infinity included: "no cap") that.
    /// A negative base delay trapped in `Double.random`, and an uncapped
    /// `Retry-After` of 10^11 seconds in the conversion to nanoseconds.
    init(retries: Int, baseDelay: Double, maxDelay: Double) {
        self.retries = max(0, retries)
        self.baseDelay = Self.bounded(baseDelay)
        self.maxDelay = Self.bounded(maxDelay)
    }

    /// The longest wait before a retry: 31 years, whose nanoseconds still fit a `UInt64`.
    static let longestDelay: Double = 1e9

    private static func bounded(_ seconds: Double) -> Double {
        seconds.isNaN ? 0 : min(max(0, seconds), longestDelay)
    }

    /// Connect errors (a connection closed before any byte of an answer is
    /// one), timeouts, 408, 429 and 5xx are worth another attempt (SPEC §5);
    /// everything else will fail the same way again.
    func isRetryable(_ error: FetchError) -> Bool {
        switch error.kind {
        case .connect, .timeout: return true
        case .network, .tls: return error.closedBeforeAnswer
        case .http:
            guard let status = error.status else { return false }
            return Self.isRetryable(status: status)
        default: return false
        }
    }

    /// 408, 429 and 5xx: the statuses worth another attempt.
    static func isRetryable(status: Int) -> Bool {
        status == 408 || status == 429 || (500...599).contains(status)
    }

    /// Seconds to wait before attempt `attempt + 1` (attempt counts from 1):
    /// the server's `Retry-After` when given (capped at `maxDelay`), else
    /// exponential backoff with full jitter.
    func delay(after attempt: Int, error: FetchError) -> Double {
        if let seconds = error.retryAfter {
            return min(max(0, seconds), maxDelay)
        }
        let ceiling = min(maxDelay, baseDelay * Double(1 << min(attempt - 1, 20)))
        return Double.random(in: 0...ceiling)
    }

    /// `Retry-After` is delay-seconds or an HTTP-date.
    static func retryAfterSeconds(_ value: String, now: Double = currentUnixTime()) -> Double? {
        let trimmed = trimWhitespace(value)
        if let seconds = Double(trimmed), seconds >= 0 { return seconds }
        if let date = HTTPDate.parse(trimmed) { return max(0, date - now) }
        return nil
    }
}
