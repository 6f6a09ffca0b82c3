#if canImport(Glibc)
import Glibc
#endif

/// What the output needs to know about its terminal: whether a descriptor
/// is one, whether colour is wanted, how wide it is. It reads the
/// environment and asks the kernel, and writes nothing.
enum Terminal {
    /// Whether `fd` is a terminal.
    static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// Colour on `fd`: only a terminal that is not `dumb`, and only when
    /// `NO_COLOR` is unset or empty (https://no-color.org).
    static func colorAllowed(on fd: Int32) -> Bool {
        guard isTerminal(fd) else { return false }
        if let noColor = getenv("NO_COLOR"), noColor.pointee != 0 { return false }
        return !isDumb
    }

    /// A `dumb` terminal cannot erase a line, so it gets no progress bar by default.
    static var isDumb: Bool {
        guard let term = getenv("TERM") else { return false }
        return String(cString: term) == "dumb"
    }

    /// Columns of the terminal on `fd` (`$COLUMNS`, else 80, when unknown).
    static func width(_ fd: Int32) -> Int {
        var size = winsize()
        if ioctl(fd, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 { return Int(size.ws_col) }
        if let columns = getenv("COLUMNS"), let value = Int(String(cString: columns)), value > 0 { return value }
        return 80
    }
}
