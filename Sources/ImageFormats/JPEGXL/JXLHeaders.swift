/// The JPEG XL codestream headers that say where the image ends
/// (ISO/IEC 18181-1, read as libjxl reads them): the SizeHeader and
/// ImageMetadata once, then for every frame its FrameHeader and table of
/// contents (TOC), whose entries add up to the frame's length in bytes. The
/// frame marked `is_last` ends the image.
///
/// Only fields are read, never entropy-coded data: a codestream that needs
/// it to find its end (an embedded ICC profile, a permuted TOC), a preview
/// frame or JPEG-recompression chroma subsampling throws `unsupported`,
/// and the body passes undecided.
enum JXLHeaders {
    enum Stop: Error { case needMore, unsupported }

    /// What later frame headers depend on.
    struct Image {
        var width = 0, height = 0
        var xybEncoded = true
        var extraChannels = 0
        var animation = false, timecodes = false
    }

    struct Frame {
        var isLast: Bool
        /// Bytes of frame data after the header and TOC (which end byte-aligned).
        var dataLength: Int64
    }

    /// Signature, SizeHeader, ImageMetadata and the transform data; leaves `bits` byte-aligned at the first frame.
    static func image(_ bits: inout JXLBits) throws(Stop) -> Image {
        guard try bits.u(8) == 0xFF, try bits.u(8) == 0x0A else { throw .unsupported }
        var image = Image()
        (image.width, image.height) = try size(&bits)
        if try !bits.bool() {                                   // !all_default
            let extraFields = try bits.bool()
            if extraFields {
                _ = try bits.u(3)                               // orientation
                if try bits.bool() { _ = try size(&bits) }      // intrinsic size
                if try bits.bool() { throw .unsupported }       // a preview frame comes first
                if try bits.bool() {                            // animation
                    image.animation = true
                    _ = try bits.u32((100, 0), (1000, 0), (1, 10), (1, 30))
                    _ = try bits.u32((1, 0), (1001, 0), (1, 8), (1, 10))
                    _ = try bits.u32((0, 0), (0, 3), (0, 16), (0, 32))
                    image.timecodes = try bits.bool()
                }
            }
            try bitDepth(&bits)
            _ = try bits.bool()                                 // modular_16bit_buffers
            image.extraChannels = try bits.u32((0, 0), (1, 0), (2, 4), (1, 12))
            for _ in 0..<image.extraChannels { try extraChannel(&bits) }
            image.xybEncoded = try bits.bool()
            try colourEncoding(&bits)
            if extraFields, try !bits.bool() {                  // tone mapping, not all_default
                _ = try bits.u(16 + 16)
                _ = try bits.bool()
                _ = try bits.u(16)
            }
            try extensions(&bits)
        }
        if try !bits.bool() {                                   // !default_m: CustomTransformData
            if image.xybEncoded, try !bits.bool() {             // opsin inverse matrix, not all_default
                try bits.skip(16 * (9 + 3 + 4))
            }
            let weights = try bits.u(3)
            if weights & 1 != 0 { try bits.skip(16 * 15) }
            if weights & 2 != 0 { try bits.skip(16 * 55) }
            if weights & 4 != 0 { try bits.skip(16 * 210) }
        }
        try bits.alignToByte()
        return image
    }

    /// One FrameHeader and its TOC, from a byte boundary; leaves `bits` byte-aligned at the frame data.
    static func frame(_ bits: inout JXLBits, image: Image) throws(Stop) -> Frame {
        var type = 0, modular = false, flags: UInt64 = 0, ycbcr = false, upsampling = 1
        var groupShift = 1, passes = 1, lfLevel = 0, isLast = true
        var width = image.width, height = image.height
        if try !bits.bool() {                                   // !all_default
            type = try bits.u(2)
            modular = try bits.bool()
            flags = try bits.u64()
            if !image.xybEncoded { ycbcr = try bits.bool() }
            if flags & 32 == 0 {                                // no LF frame used
                if ycbcr, try bits.u(6) != 0 { throw .unsupported }       // JPEG chroma subsampling
                upsampling = 1 << (try bits.u(2))
                for _ in 0..<image.extraChannels { _ = try bits.u(2) }
            }
            if modular { groupShift = try bits.u(2) } else if image.xybEncoded { _ = try bits.u(6) }
            if type != 2 {                                      // not reference-only: passes
                passes = try bits.u32((1, 0), (2, 0), (3, 0), (4, 3))
                if passes != 1 {
                    let downsamples = try bits.u32((0, 0), (1, 0), (2, 0), (3, 1))
                    try bits.skip(2 * (passes - 1) + 2 * downsamples)
                    for _ in 0..<downsamples { _ = try bits.u32((0, 0), (1, 0), (2, 0), (0, 3)) }
                }
            }
            var partial = false
            if type == 1 {
                lfLevel = 1 + (try bits.u(2))
            } else if try bits.bool() {                         // custom size or origin
                let encoding = [(0, 8), (256, 11), (2304, 14), (18688, 30)]
                var x0 = 0, y0 = 0
                if type != 2 {
                    x0 = unpackSigned(try bits.u32(encoding[0], encoding[1], encoding[2], encoding[3]))
                    y0 = unpackSigned(try bits.u32(encoding[0], encoding[1], encoding[2], encoding[3]))
                }
                width = try bits.u32(encoding[0], encoding[1], encoding[2], encoding[3])
                height = try bits.u32(encoding[0], encoding[1], encoding[2], encoding[3])
                if type == 0 || type == 3 {
                    partial = x0 > 0 || y0 > 0 || width + x0 < image.width || height + y0 < image.height
                }
            }
            var duration = 0, replace = true
            if type == 0 || type == 3 {
                for channel in 0...image.extraChannels {        // the frame's blending, then each extra channel's
                    let mode = try blending(&bits, extraChannels: image.extraChannels, partial: partial)
                    if channel == 0 { replace = mode == 0 }
                }
                if image.animation {
                    duration = try bits.u32((0, 0), (1, 0), (0, 8), (0, 32))
                    if image.timecodes { _ = try bits.u(32) }
                }
                isLast = try bits.bool() && type == 0          // read for skip-progressive frames too, but only a regular one ends
            } else {
                isLast = false
            }
            var saveAsReference = 0
            if type != 1 && !isLast { saveAsReference = try bits.u(2) }
            if type != 1 {
                let referenced = !isLast && (duration == 0 || saveAsReference != 0)
                if type == 2 || (referenced && replace && !partial && (type == 0 || type == 3)) { _ = try bits.bool() }
            }
            let nameLength = try bits.u32((0, 0), (0, 4), (16, 5), (48, 10))
            try bits.skip(8 * nameLength)
            try loopFilter(&bits, modular: modular)
            try extensions(&bits)
        }
        if lfLevel > 0 {
            width = (image.width + (1 << (3 * lfLevel)) - 1) >> (3 * lfLevel)
            height = (image.height + (1 << (3 * lfLevel)) - 1) >> (3 * lfLevel)
        }
        width = (width + upsampling - 1) / upsampling
        height = (height + upsampling - 1) / upsampling
        let groupDim = 128 << groupShift
        func groups(_ dim: Int) -> Int { (width + dim - 1) / dim * ((height + dim - 1) / dim) }
        let groupCount = groups(groupDim), lfGroupCount = groups(groupDim * 8)
        guard groupCount <= FormatLimits.jxlGroups else { throw .unsupported }
        let entries = passes == 1 && groupCount == 1 ? 1 : 2 + lfGroupCount + groupCount * passes
        if try bits.bool() { throw .unsupported }               // a permuted TOC is entropy-coded
        try bits.alignToByte()
        var length: Int64 = 0
        for _ in 0..<entries { length += Int64(try bits.u32((0, 10), (1024, 14), (17408, 22), (4_211_712, 30))) }
        try bits.alignToByte()
        return Frame(isLast: isLast, dataLength: length)
    }

    /// The SizeHeader (§D.2): width and height. The header sniff reads it too.
    static func size(_ bits: inout JXLBits) throws(Stop) -> (width: Int, height: Int) {
        let small = try bits.bool()
        let height = small ? 8 * (1 + (try bits.u(5))) : try bits.u32((1, 9), (1, 13), (1, 18), (1, 30))
        let ratio = try bits.u(3)
        if ratio == 0 {
            return (small ? 8 * (1 + (try bits.u(5))) : try bits.u32((1, 9), (1, 13), (1, 18), (1, 30)), height)
        }
        let (numerator, denominator) = [(1, 1), (12, 10), (4, 3), (3, 2), (16, 9), (5, 4), (2, 1)][ratio - 1]
        return (height * numerator / denominator, height)
    }

    private static func bitDepth(_ bits: inout JXLBits) throws(Stop) {
        if try bits.bool() {                                    // floating point
            _ = try bits.u32((32, 0), (16, 0), (24, 0), (1, 6))
            _ = try bits.u(4)
        } else {
            _ = try bits.u32((8, 0), (10, 0), (12, 0), (1, 6))
        }
    }

    private static func extraChannel(_ bits: inout JXLBits) throws(Stop) {
        if try bits.bool() { return }                           // all_default: an alpha channel
        let type = try bits.enumeration()
        try bitDepth(&bits)
        _ = try bits.u32((0, 0), (3, 0), (4, 0), (1, 3))        // dim_shift
        try bits.skip(8 * (try bits.u32((0, 0), (0, 4), (16, 5), (48, 10))))   // name
        if type == 0 { _ = try bits.bool() }                    // alpha: associated
        if type == 2 { try bits.skip(16 * 4) }                  // spot colour
        if type == 5 { _ = try bits.u32((1, 0), (0, 2), (3, 4), (19, 8)) }     // CFA channel
    }

    private static func colourEncoding(_ bits: inout JXLBits) throws(Stop) {
        if try bits.bool() { return }                           // all_default: sRGB
        if try bits.bool() { throw .unsupported }               // want_icc: an entropy-coded profile follows
        let space = try bits.enumeration()
        if space != 2 {                                         // not XYB: white point, primaries
            if try bits.enumeration() == 2 { try customXY(&bits) }
            if space != 1, try bits.enumeration() == 2 { for _ in 0..<3 { try customXY(&bits) } }
        }
        if space != 2 {                                         // gamma or transfer function (implicit for XYB)
            if try bits.bool() { _ = try bits.u(24) } else { _ = try bits.enumeration() }
        }
        _ = try bits.enumeration()                              // rendering intent
    }

    private static func customXY(_ bits: inout JXLBits) throws(Stop) {
        for _ in 0..<2 { _ = try bits.u32((0, 19), (0x80000, 19), (0x100000, 20), (0x200000, 21)) }
    }

    /// BlendingInfo; returns the mode.
    private static func blending(_ bits: inout JXLBits, extraChannels: Int, partial: Bool) throws(Stop) -> Int {
        let mode = try bits.u32((0, 0), (1, 0), (2, 0), (3, 2))
        if extraChannels > 0 && (mode == 2 || mode == 3) { _ = try bits.u32((0, 0), (1, 0), (2, 0), (3, 3)) }
        if (extraChannels > 0 && (mode == 2 || mode == 3)) || mode == 4 { _ = try bits.bool() }
        if mode != 0 || partial { _ = try bits.u(2) }
        return mode
    }

    private static func loopFilter(_ bits: inout JXLBits, modular: Bool) throws(Stop) {
        if try bits.bool() { return }                           // all_default
        if try bits.bool(), try bits.bool() { try bits.skip(16 * 6) }   // gab, gab_custom
        guard try bits.u(2) > 0 else { return try extensions(&bits) }   // epf_iters
        if !modular, try bits.bool() { try bits.skip(16 * 8) }  // epf_sharp_custom
        if try bits.bool() { try bits.skip(16 * 5) }            // epf_weight_custom
        if try bits.bool() { try bits.skip(16 * (modular ? 3 : 4)) }    // epf_sigma_custom
        if modular { try bits.skip(16) }                        // epf_sigma_for_modular
        try extensions(&bits)
    }

    private static func extensions(_ bits: inout JXLBits) throws(Stop) {
        let present = try bits.u64()
        var total: UInt64 = 0
        for k in 0..<64 where present >> UInt64(k) & 1 == 1 {
            let (sum, overflow) = total.addingReportingOverflow(try bits.u64())
            guard !overflow, sum < FormatLimits.jxlExtensionBits else { throw .unsupported }
            total = sum
        }
        try bits.skip(Int(total))
    }

    private static func unpackSigned(_ value: Int) -> Int { value & 1 == 1 ? -(value + 1) / 2 : value / 2 }
}
