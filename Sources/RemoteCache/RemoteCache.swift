/// RemoteCache: the shared cache tier on object storage (`--remote-cache`).
///
/// It owns where an entry's object lives (WebDAV or S3 locations, signing),
/// the object's format (a header line, the record, the body, checked while it
/// streams), uploads and downloads through `Fetch`, and `pull`. It reads and
/// writes the local cache only through `DiskCache`, never decides freshness
/// (HTTPCaching does), and a failing tier never fails a URL: it is a source,
/// never the only one.
public enum RemoteCache {}
