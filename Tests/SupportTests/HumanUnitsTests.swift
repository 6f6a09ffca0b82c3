import Support
import Testing

/// Sizes and durations in and out, with known values.
@Suite struct HumanUnitsTests {
    @Test func sizesForPeople() {
        #expect(HumanUnits.bytes(0) == "0 B")
        #expect(HumanUnits.bytes(1023) == "1023 B")
        #expect(HumanUnits.bytes(1024) == "1.0 KiB")
        #expect(HumanUnits.bytes(4300) == "4.2 KiB")
        #expect(HumanUnits.bytes(1 << 20) == "1.0 MiB")
        #expect(HumanUnits.bytes(3 << 40) == "3.0 TiB")
        var line = Array("size ".utf8)
        HumanUnits.appendBytes(153, to: &line)
        HumanUnits.appendDecimal(-42, to: &line)
        HumanUnits.appendDecimal(Int64.min, to: &line)
        #expect(String(decoding: line, as: UTF8.self) == "size 153 B-42-9223372036854775808")
    }

    @Test func durationsForPeople() {
        #expect(HumanUnits.duration(0.01236) == "12.4 ms")
        #expect(HumanUnits.duration(1.25) == "1.25 s")
        #expect(HumanUnits.duration(3.05) == "3.05 s")
    }

    @Test func durationArguments() {
        #expect(HumanUnits.seconds("30") == 30)
        #expect(HumanUnits.seconds("0.5") == 0.5)
        #expect(HumanUnits.seconds("90S") == 90)
        #expect(HumanUnits.seconds("5m") == 300)
        #expect(HumanUnits.seconds("1.5h") == 5400)
        #expect(HumanUnits.seconds("7d") == 604_800)
        for bad in ["", "-1", "5x", "500ms", "inf", "nan", "m"] { #expect(HumanUnits.seconds(bad) == nil, "\(bad)") }
        // Only decimal numbers: Double("0x1d") is 29, and "0x1d" was taken as 1 day.
        for bad in ["0x1d", "0x10", "1e3", "+5", "5..5", ".", "1.2.3s", " 5", "5 "] { #expect(HumanUnits.seconds(bad) == nil, "\(bad)") }
        #expect(HumanUnits.seconds(".5") == 0.5 && HumanUnits.seconds("5.") == 5)
        #expect(HumanUnits.durationArgument(604_800) == "7d")
        #expect(HumanUnits.durationArgument(5400) == "90m")
        #expect(HumanUnits.durationArgument(0.5) == "0.5s")
    }

    @Test func sizeArguments() {
        #expect(HumanUnits.byteCount("65536") == 65536)
        #expect(HumanUnits.byteCount("512K") == 524_288)
        #expect(HumanUnits.byteCount("64m") == 67_108_864)
        #expect(HumanUnits.byteCount("1.5G") == 1_610_612_736)
        #expect(HumanUnits.byteCount("2KiB") == 2048 && HumanUnits.byteCount("2kb") == 2048)
        for bad in ["", "-1", "1T", "K", "9000000000G", "B", "10B", "5iB", "IB", "5TiB"] { #expect(HumanUnits.byteCount(bad) == nil, "\(bad)") }
        for bad in ["0x10", "0x1G", "1e3", "+5", "1.5.1M"] { #expect(HumanUnits.byteCount(bad) == nil, "\(bad)") }
        // Bytes are whole: a fraction was cut off (1.7 was 1 byte, 0.1K 102).
        for bad in ["1.7", "0.5", "0.1K", "1.2K", "1.1M", "1.0000001G"] { #expect(HumanUnits.byteCount(bad) == nil, "\(bad)") }
        #expect(HumanUnits.byteCount("1.0") == 1 && HumanUnits.byteCount("1.5K") == 1536 && HumanUnits.byteCount("0.25k") == 256)
        #expect(HumanUnits.byteCountArgument(64 << 20) == "64M")
        #expect(HumanUnits.byteCountArgument(1000) == "1000")
    }

    /// Every example the refusal message names is one the parser accepts,
    /// so the message never suggests a form that would be refused again.
    @Test func theFormsInWordsAreAccepted() {
        func examples(_ forms: String) -> [String] {
            forms.split(whereSeparator: { "(), ".contains($0) }).map(String.init).filter { $0.first?.isNumber == true }
        }
        #expect(examples(HumanUnits.secondsForms) == ["30", "0.5", "90s", "5m", "1.5h", "7d"])
        for example in examples(HumanUnits.secondsForms) { #expect(HumanUnits.seconds(example) != nil, "\(example)") }
        #expect(examples(HumanUnits.byteCountForms) == ["65536", "1024", "512K", "64M", "1.5G"])
        for example in examples(HumanUnits.byteCountForms) { #expect(HumanUnits.byteCount(example) != nil, "\(example)") }
    }

    @Test func timestampsInUTC() {
        #expect(HumanUnits.isoTimestamp(1_795_306_293.9) == "2026-11-22T00:11:33Z")
        #expect(HumanUnits.humanTimestamp(1_795_306_293) == "2026-11-22 00:11:33")
        #expect(HumanUnits.humanTimestamp(.nan) == "????-??-?? ??:??:??")
    }
}
