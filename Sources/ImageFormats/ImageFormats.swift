/// ImageFormats: "is this body a complete image, and what is it?"
///
/// It owns everything asyncfetch knows about image bytes: sniffing the format
/// from magic bytes, reading pixel dimensions from headers, and the streaming
/// structure walks (PNG, JPEG, GIF, WebP, BMP, TIFF, ICO, ISO BMFF, JPEG XL,
/// SVG) that say whether a body ends where its own structure says. One folder
/// per format holds that format's sniffing, header and walk side by side.
///
/// ImageFormats never does I/O, never imports another asyncfetch module (only
/// the CRC corner, `CCRC`), and never decides what is stored: it judges bytes
/// it is handed and nothing else.
public enum ImageFormats {}
