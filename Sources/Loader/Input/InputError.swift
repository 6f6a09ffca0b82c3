/// A list of URLs that cannot be read: its path and why (strerror, "is a directory").
public struct InputError: Error, Equatable, CustomStringConvertible {
    public let path: String
    public let problem: String

    public init(path: String, problem: String) {
        self.path = path
        self.problem = problem
    }

    public var description: String { "cannot read \(path): \(problem)" }
}
