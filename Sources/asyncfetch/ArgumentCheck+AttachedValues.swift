/// A value joined to its short option, as getopt, curl and wget take it:
/// `-ocat.png`, `-H'Accept: image/png'`, `-Pphotos`, `-iurls.txt`, `-qo-`.
/// swift-argument-parser reads such a word as a cluster of flags, so they
/// were "Unknown option '-.'" (of `-ocat.png`), "Unknown option '-X'" (of
/// `-H'X-A: 1'`) or "Unknown option '-Pphotos'". Each becomes the option and
/// its value, two arguments, before either parser reads the command line.
extension ArgumentCheck {
    /// `arguments` with each attached value given on its own: a word of
    /// known short flags up to a short option that takes a value, then more
    /// letters, is split after that option. A word with a letter no option
    /// has before it (wget's `-Ocat.png`, `-nc`) is left as it is, for the
    /// habit hints and the parser; so is an option's value, and all after `--`.
    static func separatingAttachedValues(_ arguments: [String]) -> [String] {
        var separated: [String] = []
        separated.reserveCapacity(arguments.count)
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                separated += arguments[(index - 1)...]
                break
            }
            let words = attachedValue(argument) ?? [argument]
            separated += words
            // An option's value is never split (`--user-agent -ofoo`, `-H -Hfoo`, `-qo -ofoo`).
            if let last = words.last, last.hasPrefix("-"), takesNextArgument(last), index < arguments.count {
                separated.append(arguments[index])
                index += 1
            }
        }
        return separated
    }

    /// `-ocat.png` as `-o cat.png`, `-qo-` as `-qo -`; a value that starts with
    /// `-` (not `-` alone, standard output) in its long form, which no parser
    /// reads as an option: `-o-x.png` as `--output=-x.png`, `-qo-x.png` as
    /// `-q --output=-x.png` (as getopt and curl read them). Flags before an
    /// option whose value is the next argument stand apart from it: `-qo FILE`
    /// as `-q -o FILE`, so that `-qo -x.png` is told how to give a value that
    /// starts with `-`, as `-o -x.png` is (swift-argument-parser said
    /// "Unknown option '-qo'"). Nil for anything else.
    private static func attachedValue(_ argument: String) -> [String]? {
        guard argument.count > 2, argument.hasPrefix("-"), !argument.hasPrefix("--") else { return nil }
        var letters = argument.dropFirst()
        var option = "-"
        while let letter = letters.first {
            guard let canonical = shortNames[letter] else { return nil }
            letters = letters.dropFirst()
            guard valueOptions.contains(canonical) else {
                option.append(letter)
                continue
            }
            if letters.isEmpty { return option == "-" ? nil : [option, "-" + String(letter)] }
            let value = String(letters)
            let flags = option == "-" ? [] : [option]
            if value.hasPrefix("-") && value != "-" { return flags + [canonical + "=" + value] }
            return [option + String(letter), value]
        }
        return nil
    }
}
