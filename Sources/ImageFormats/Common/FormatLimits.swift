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
    /// Values one TIFF directory entry may count (more: the entry is skipped
    /// as damaged); it keeps the entry's byte length, count × its type's
    /// size (at most 8), far from overflowing.
    static let tiffEntryValues: Int64 = 1 << 40
    /// Directory entries of an ICO the header sniff reads for the largest image.
    static let icoEntries = 256
    /// Boxes read at one level of an ISO BMFF container, and how deep the
    /// check that every box fits the one around it goes.
    static let isobmffBoxesPerLevel = 512
    static let isobmffDepth = 8
    /// Entries of an `ipma` box read for an item's properties.
    static let ipmaEntries = 4096
    /// Items of an `iloc` box whose extents a walk reads (the rest are not checked).
    static let ilocItems: Int64 = 65_536
    /// The widest and tallest uncompressed BMP a walk sizes, and the most bits
    /// a pixel may have (more: "BMP has an impossible size").
    static let bmpSide: Int64 = 1 << 24
    static let bmpBitsPerPixel: Int64 = 64
    /// Bytes a JPEG XL walk gathers for one frame's headers (more: undecided).
    static let jxlHeaderBytes = 256 << 10
    /// Groups one JPEG XL frame may have for its table of contents to be
    /// read (more: undecided), and the bits its header extensions may take.
    static let jxlGroups = 1 << 20
    static let jxlExtensionBits: UInt64 = 1 << 32
    /// Capacity a walker's gathered bytes keep between two `need`s; a larger
    /// buffer (a big ISO BMFF `meta` box) is given back.
    static let gatheredKeptBytes = 64 << 10
}
