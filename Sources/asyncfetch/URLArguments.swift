/// swift-argument-parser handles a long list of positional arguments in
/// quadratic time (10,000 URLs on the command line took 2.5 s to parse).
/// `asyncfetch $(cat urls.txt)` is a normal thing to type, so long URL lists
/// are taken out before parsing and handed to the command afterwards.
enum URLArguments {
    /// Below this many URL arguments, parsing is left entirely to swift-argument-parser.
    static let threshold = 16
    /// Options whose next argument is their value, never a URL to fetch.
    static let valueOptions: Set<String> = ["-o", "--output", "--cache-dir", "--input", "--cacert", "-H", "--header", "--remote-cache", "--user-agent"]

    /// Splits `arguments` into those to parse and the http(s) URLs taken out
    /// (in order). Returns nil when there are too few URLs to matter.
    static func extract(_ arguments: [String]) -> (rest: [String], urls: [String])? {
        var rest: [String] = []
        var urls: [String] = []
        var previous = ""
        var afterSeparator = false
        for argument in arguments {
            if argument == "--" { afterSeparator = true }
            if !afterSeparator && !valueOptions.contains(previous) && looksLikeWebURL(argument) {
                urls.append(argument)
            } else {
                rest.append(argument)
            }
            previous = argument
        }
        guard urls.count >= threshold else { return nil }
        return (rest, urls)
    }

    private static func looksLikeWebURL(_ argument: String) -> Bool {
        let head = argument.utf8.prefix(8).map { $0 | 0x20 }   // ASCII lowercase
        return head.starts(with: "http://".utf8) || head.starts(with: "https://".utf8)
    }
}
