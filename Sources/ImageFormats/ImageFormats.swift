/// ImageFormats: "is this body a complete image, and what is it?"
///
/// It owns everything asyncfetch knows about image bytes: sniffing the format
/// from magic bytes, reading pixel dimensions from headers, and the streaming
/// structure walks (PNG, JPEG, GIF, WebP, BMP, TIFF, ICO, ISO BMFF, JPEG XL,
/// SVG) that say whether a body ends where its own structure says. One folder
/// per format holds that format's sniffing, header and walk side by side;
/// `Common/` holds what they share (the walker protocol, the bounds-checked
/// byte reader, CRC-32).
///
/// ImageFormats never does I/O, never imports another asyncfetch module (only
/// the CRC corner, `CCRC`), and never decides what is stored: it judges bytes
/// it is handed and nothing else.
///
/// Entry points: `inspect(_:)` for a whole body in memory; `ImageStructure`
/// to check a body chunk by chunk as it streams (then `inspection(head:)`);
/// `ImageInfo.sniff` for the format and size from the first bytes alone.
public enum ImageFormats {
    /// Whether `body` is a complete image, and which: its structure walked
    /// to its end and its header read. Pure: no I/O, no allocation beyond
    /// the bounded headers a walk gathers.
    public static func inspect(_ body: [UInt8]) -> ImageInspection {
        var structure = ImageStructure()
        body.withUnsafeBytes { structure.feed($0) }
        return structure.inspection(head: body)
    }
}
