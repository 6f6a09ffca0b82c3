/// `SIGINT` / `SIGTERM` for messages.
func signalName(_ signo: Int32) -> String {
    switch signo {
    case 2: return "SIGINT"
    case 15: return "SIGTERM"
    default: return "signal \(signo)"
    }
}

extension String {
    /// The string followed by spaces up to `length` characters (never cut):
    /// aligned columns in human output.
    func padding(toLength length: Int) -> String {
        count >= length ? self : self + String(repeating: " ", count: length - count)
    }
}
