/// A HEIF `clap` box (ISO/IEC 14496-12 §12.1.4.1): the clean aperture's
/// width and height and its centre's offset, as fractions. The cropped size
/// is computed with libheif's integer arithmetic (its `Fraction` type:
/// truncating division; the left/top edge rounded down or to nearest, the
/// right/bottom edge to nearest, both clamped to the coded image), so that
/// asyncfetch reports the size every libheif-based decoder shows.
struct CleanAperture {
    struct Fraction {
        var numerator: Int64
        var denominator: Int64

        // Wrapping arithmetic: hostile values give a nonsense size (clamped below), never a trap.
        static func + (a: Fraction, b: Fraction) -> Fraction {
            a.denominator == b.denominator ? Fraction(numerator: a.numerator &+ b.numerator, denominator: a.denominator)
                : Fraction(numerator: a.numerator &* b.denominator &+ b.numerator &* a.denominator,
                           denominator: a.denominator &* b.denominator)
        }
        static func - (a: Fraction, b: Fraction) -> Fraction { a + Fraction(numerator: 0 &- b.numerator, denominator: b.denominator) }
        static func - (a: Fraction, v: Int64) -> Fraction {
            Fraction(numerator: a.numerator &- v &* a.denominator, denominator: a.denominator)
        }
        static func + (a: Fraction, v: Int64) -> Fraction { a - (0 &- v) }
        static func / (a: Fraction, v: Int64) -> Fraction { Fraction(numerator: a.numerator, denominator: a.denominator &* v) }
        /// Truncating division, as C's; nil when wrapping left no positive denominator.
        var roundedDown: Int64? { denominator > 0 ? numerator / denominator : nil }
        var rounded: Int64? { denominator > 0 ? (numerator &+ denominator / 2) / denominator : nil }
    }

    let width: Fraction, height: Fraction, horizontalOffset: Fraction, verticalOffset: Fraction

    /// nil when the box is short or a denominator is zero.
    init?(_ b: Bytes, at start: Int) {
        var values: [Int64] = []
        for k in 0..<8 {
            guard let raw = b.u32be(start + 4 * k) else { return nil }
            // widths, heights and denominators are unsigned; the offsets' numerators are signed
            values.append(k == 4 || k == 6 ? Int64(Int32(truncatingIfNeeded: raw)) : Int64(raw))
        }
        guard values[1] > 0, values[3] > 0, values[5] > 0, values[7] > 0 else { return nil }
        width = Fraction(numerator: values[0], denominator: values[1])
        height = Fraction(numerator: values[2], denominator: values[3])
        horizontalOffset = Fraction(numerator: values[4], denominator: values[5])
        verticalOffset = Fraction(numerator: values[6], denominator: values[7])
    }

    /// The cropped width of an image `coded` pixels wide.
    func horizontal(_ coded: Int) -> Int? {
        let centre = horizontalOffset + Fraction(numerator: Int64(coded) - 1, denominator: 2)
        guard let left = (centre - (width - 1) / 2).roundedDown, let right = (width - 1 + left).rounded else { return nil }
        return Self.span(left, right, coded)
    }

    /// The cropped height of an image `coded` pixels high.
    func vertical(_ coded: Int) -> Int? {
        let centre = verticalOffset + Fraction(numerator: Int64(coded) - 1, denominator: 2)
        guard let top = (centre - (height - 1) / 2).rounded, let bottom = (height - 1 + top).rounded else { return nil }
        return Self.span(top, bottom, coded)
    }

    private static func span(_ first: Int64, _ last: Int64, _ coded: Int) -> Int? {
        let from = max(0, first), to = min(Int64(coded) - 1, last)
        return from <= to ? Int(to - from + 1) : nil
    }
}
