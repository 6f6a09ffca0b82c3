import Fetch

/// The limits of reading URL lists (`InputLines`, `--input`).
extension Defaults {
    /// Lines an `InputLines` reads ahead of the batch (a bounded buffer: a
    /// million-line list streams through in constant memory).
    public static let inputReadAheadLines = 1024
    /// Bytes held ahead of the batch, whichever limit comes first.
    public static let inputReadAheadBytes = 1 << 20
    /// Chunk size of list reads.
    public static let inputChunkBytes = 64 * 1024
    /// A longer line is reported as an invalid URL, not buffered whole.
    public static let inputMaxLineBytes = 1 << 20
    /// Capacity a line split across reads keeps for the next one; a longer
    /// line's buffer is given back.
    static let inputKeptLineBytes = 64 * 1024
    /// How much of a file named where a URL goes `NonURLWord` reads to tell
    /// a list of URLs (`://` in it) from any other file.
    public static let nonURLPeekBytes = 4096
}
