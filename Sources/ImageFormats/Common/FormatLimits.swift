/// The bounds on what a body's bytes can make ImageFormats do, in one
/// place: how far a sniff looks, how many entries, boxes or directories a
/// header read or a walk visits, and how many bytes a walk holds. A body
/// past a bound is judged as far as the bound goes (a sniff stops there, a
/// walk passes undecided or fails with a sentence): none is read without end.
enum FormatLimits {
    /// Bytes gathered before a walker is chosen: enough for every signature.
    static let signatureBytes = 16
    /// The most one `need` of a walker may gather (an ISO BMFF `meta` box, a
    /// TIFF's strip table): past it the body passes undecided rather than grow memory.
    static let gatherBytes = 4 << 20
    /// Bytes at the start of a body the SVG sniff looks through for the root element.
    static let svgSniffBytes = 4096
    /// Entries of a TIFF's first directory the header sniff reads for the size.
    static let tiffSniffEntries = 1024
    /// Entries one TIFF directory may have in a walk (more: refused as damaged).
    static let tiffDirectoryEntries = 4096
    /// Directories a TIFF walk follows down the chain.
    static let tiffDirectories = 256
    /// Bytes of directories and tables a TIFF walk reads in all (more: undecided).
    static let tiffCapturedBytes = 4 << 20
    /// Directory entries of an ICO the header sniff reads for the largest image.
    static let icoEntries = 256
    /// Boxes read at one level of an ISO BMFF container, and how deep the
    /// check that every box fits the one around it goes.
    static let isobmffBoxesPerLevel = 512
    static let isobmffDepth = 8
    /// Entries of an `ipma` box read for an item's properties.
    static let ipmaEntries = 4096
    /// Bytes a JPEG XL walk gathers for one frame's headers (more: undecided).
    static let jxlHeaderBytes = 256 << 10
}
