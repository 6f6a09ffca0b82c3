/// A failure after the URLs were reported (e.g. writing `-o`): exit 1.
struct RuntimeFailure: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}
