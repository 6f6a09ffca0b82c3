/// ImageDecoding: "does every pixel of this stored body decode?" (`--decode`).
///
/// It owns the one call into a real decoder library, libvips (through the C
/// corner `CVips`): the loader chosen from the format the structure check
/// found (never a guess from the bytes), failure on the decoder's first
/// error (on its first warning for JPEG, where libjpeg reports damaged scan
/// data only as a warning), the declared pixel count checked against
/// `DecodeLimits.maximumPixels` before any pixel is decoded, and a single
/// sequential pass over every pixel so memory stays bounded. It reads a file
/// it is handed by path and returns a `DecodeVerdict`.
///
/// ImageDecoding never writes, removes or moves a file, never decides what is
/// stored (the Loader and `cache verify` do), never runs on a transfer thread
/// (callers run it on the cooperative pool), and never parses image bytes
/// itself: structure is ImageFormats' job.
public enum ImageDecoding {}
