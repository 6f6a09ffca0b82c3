import Fetch
import Support

/// One `-H` argument, read as curl reads it (libcurl's CURLOPT_HTTPHEADER):
/// `Name: value` sends the header; `Name;` sends it with an empty value;
/// `Name:` (nothing after the colon) sends no header of that name, not even
/// one libcurl or Fetch adds by default (`Accept`, `User-Agent`,
/// `Accept-Encoding`). Spaces and tabs around the name and value are dropped.
/// `Name; ` (blanks after the semicolon) is `Name:` too: libcurl sends an
/// empty header only when the semicolon ends the line (lib/http.c,
/// `Curl_add_custom_headers`), and any header of that name counts as given
/// (`Curl_checkheaders`), so curl 7.88.1 sends none, its defaults included.
public enum HeaderArgument: Sendable, Equatable {
    case send(name: String, value: String)
    case remove(name: String)

    /// Reads `line`. One that cannot be sent is a `usage` `LoadError` that
    /// quotes it: neither `Name: value` nor `Name;` (no colon, or nothing
    /// before it), a line break (it would end the header and start another,
    /// sent as given: header injection), or a name or value
    /// `HTTPHeaders.problem` refuses.
    public init(parsing line: String) throws(LoadError) {
        if let colon = line.firstIndex(of: ":") {
            let name = trimWhitespace(line[..<colon])
            let value = trimWhitespace(line[line.index(after: colon)...])
            self = value.isEmpty ? .remove(name: name) : .send(name: name, value: value)
            if let problem = HTTPHeaders.problem(name: name, value: value) { throw Self.refusal(line, problem) }
        } else if let semicolon = line.firstIndex(of: ";"), trimWhitespace(line[line.index(after: semicolon)...]).isEmpty {
            let name = trimWhitespace(line[..<semicolon])
            self = line.index(after: semicolon) == line.endIndex ? .send(name: name, value: "") : .remove(name: name)
            if let problem = HTTPHeaders.problem(name: name, value: "") { throw Self.refusal(line, problem) }
        } else {
            // A line break counts before the syntax: it is the dangerous part.
            if let problem = HTTPHeaders.problem(name: line, value: ""), problem == .lineBreak { throw Self.refusal(line, problem) }
            throw Self.refusal(line, nil)
        }
    }

    /// Why `line` cannot be sent: `problem`, or its syntax when nil. An
    /// empty name is a syntax error (`: value`), as it always was.
    private static func refusal(_ line: String, _ problem: HeaderProblem?) -> LoadError {
        let message = switch problem {
        case nil, .emptyName?: "-H expects 'Name: value', got '\(line)'"
        case .lineBreak?: "-H takes one header line, without a line break: got '\(line.debugDescription.dropFirst().dropLast())'"
        case let problem?: "-H expects 'Name: value', got '\(line)': \(problem)"
        }
        return LoadError(kind: .usage, message: message)
    }

    public var name: String {
        switch self {
        case .send(let name, _), .remove(let name): name
        }
    }
}

extension FetchConfiguration {
    /// Applies `-H` arguments in order: a later one of the same name
    /// overrides a removal, and a removal drops the earlier ones of its name;
    /// several values of one name are all sent. Arguments that
    /// `HeaderArgument` refuses are left out (check them first).
    public mutating func apply(headerArguments lines: [String]) {
        for line in lines {
            guard let argument = try? HeaderArgument(parsing: line) else { continue }
            removedHeaders.removeAll { asciiCaseInsensitiveEqual($0, argument.name) }
            switch argument {
            case .send(let name, let value):
                headers.add(name: name, value: value)
            case .remove(let name):
                headers.remove(name: name)
                removedHeaders.append(name)
            }
        }
    }
}
