import Support

/// What the cache knows about one entry, stored on the body's inode in the
/// extended attribute `user.asyncfetch.meta` (or, where that is refused, in
/// a sidecar `<md5>.meta`), in a small line format that is cheap to parse (a
/// hit reads it on every run):
///
/// ```
/// asyncfetch-meta 2
/// key 0cc175b9c0f1b6a831c399e269772661
/// url https://example.com/a.png
/// status 200
/// …
/// h ETag "abc"            (a stored response header)
/// v Accept image/webp     (a request header named by Vary)
/// end
/// ```
///
/// The `end` line proves the record is complete. The body fields (length,
/// digest, mtime, and in a sidecar the inode) tie it to one body file: see
/// `CacheWriter`. Encoding and decoding live in `CacheMetadata+Coding.swift`.
public struct CacheMetadata: Sendable, Equatable {
    /// The URL, normalised (`CacheKey`), without any password (`CacheKey.storedURL`).
    public var url: String
    /// The entry's key (the body's file name). Records written before it
    /// existed leave it empty; their key is the MD5 of `url`.
    public var key: String {
        get { storedKey.text }
        set { storedKey = .text(newValue) }
    }
    /// `key`, kept as a digest where the record was looked up by one (a
    /// hit makes no string of it).
    var storedKey: StoredHex
    public var status: Int
    /// Unix seconds: when the request was sent and the response received (RFC 9111 §4.2.3).
    public var requestTime: Double
    public var responseTime: Double
    /// Unix seconds: when this metadata was written (the body stored, or a
    /// 304 recorded). Set by the store; files without it read as `responseTime`.
    public var storedAt: Double
    /// Stored response headers (Date, ETag, Last-Modified, Cache-Control, Expires, Age, Content-Type, Vary…).
    /// A decoded record keeps them as its bytes and makes this array when it
    /// is read (a hit never does: `header(_:)`, `field(_:)` and the package's
    /// `headerCount`/`headerKind(at:)`/`withHeaderValue(at:_:)` read them in
    /// place); setting it replaces them.
    public var headers: [Header] {
        get { storedHeaders.headers }
        set { storedHeaders = .list(newValue) }
    }
    /// `headers`, as given or as the decoded record has them (`CacheMetadata+Headers.swift`).
    @usableFromInline var storedHeaders: StoredHeaders
    /// Values of the request headers that the response's `Vary` names (lowercased names; missing = empty).
    public var varyRequest: [Header]
    /// False for a remembered error status: no body (an empty file carries
    /// the record, or only a sidecar exists).
    public var hasBody: Bool
    public var bodyLength: Int64
    /// Lowercase hex digest of the body, and its algorithm.
    public var bodyDigest: String {
        get { storedDigest.text }
        set { storedDigest = .text(newValue) }
    }
    /// `bodyDigest`, kept as the 16 bytes its 32 digits spell where a record
    /// was decoded (a fresh hit made, then freed, a 32-byte string of it).
    var storedDigest: StoredHex
    public var digestAlgorithm: DigestAlgorithm = .current
    /// Identity of the body file this metadata describes: a hit requires the
    /// file at the body path to have this size and mtime, and, for a sidecar
    /// (whose record is not on the body's inode), this inode; 0 where the
    /// record lives on the body itself.
    public var bodyInode: UInt64
    public var bodyMtimeNs: Int64
    /// Image facts read from the head of the body when it was stored.
    /// (`Optional<String>`, not `String?`: see `init`.)
    public var format: Optional<String>
    public var width: Int?
    public var height: Int?

    /// An entry's key or its body's digest as text, or as the 16 bytes its
    /// 32 lowercase hex digits spell (a lookup's key, a decoded digest):
    /// equal when they spell the same text. (An enum: one word more than
    /// the string alone, as the record is copied a few times per hit.)
    enum StoredHex: Sendable, Equatable {
        case text(String)
        case digest(MD5.Digest)

        var text: String {
            switch self {
            case .text(let text): text
            case .digest(let digest): digest.hex
            }
        }

        /// `text` of `bytes`: their 16 bytes when they are 32 lowercase hex digits.
        init(_ bytes: UnsafeRawBufferPointer) {
            if bytes.count == 32, let digest = MD5.Digest(hex: bytes.assumingMemoryBound(to: UInt8.self)) {
                self = .digest(digest)
            } else {
                self = .text(String(decoding: bytes, as: UTF8.self))
            }
        }

        /// Calls `body` with the text's UTF-8 bytes (no string made for a digest).
        func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
            switch self {
            case .text(let text): withUTF8Bytes(of: text, body)
            case .digest(let digest): digest.withHex { digits, _ in body(digits) }
            }
        }

        var utf8Count: Int {
            switch self {
            case .text(let text): text.utf8.count
            case .digest: 32
            }
        }

        static func == (a: StoredHex, b: StoredHex) -> Bool {
            if case .digest(let x) = a, case .digest(let y) = b { return x == y }
            return a.text == b.text
        }
    }

    public struct Header: Sendable, Equatable {
        public var name: String
        /// The value. A decoded record's longer values are kept as bytes of
        /// the record and become a `String` only when read here (see
        /// `withValueBytes`).
        public var value: String {
            get {
                switch storage {
                case .text(let text): text
                case .record(let record, let start, let end): String(decoding: record[Int(start)..<Int(end)], as: UTF8.self)
                }
            }
            set { storage = .text(newValue) }
        }

        /// Where the value is: a string, or a run of a decoded record's bytes
        /// (one copy of the record, shared by its headers). A hit reads its
        /// `Date` and `Last-Modified` as bytes (`Freshness`) and never its
        /// `ETag`: each was a string made, then freed, on every hit.
        @usableFromInline enum Storage: Sendable {
            case text(String)
            case record([UInt8], start: Int32, end: Int32)
        }
        @usableFromInline var storage: Storage

        public init(_ name: String, _ value: String) { self.name = name; storage = .text(value) }

        /// A value that is `record[start..<end]`, ASCII (the decoder's).
        init(_ name: String, record: [UInt8], start: Int, end: Int) {
            self.name = name
            storage = .record(record, start: Int32(start), end: Int32(end))
        }

        /// The UTF-8 of `value`, borrowed for the call: a value kept as
        /// record bytes (ASCII only: the decoder keeps no other) is read in
        /// place, with no `String` made.
        /// Inlinable, so that it is specialised where it is called (a
        /// generic call across modules cost ~800 instructions a date).
        @inlinable
        public func withValueBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
            switch storage {
            case .text(let text):
                if let result = try text.utf8.withContiguousStorageIfAvailable(body) { return result }
                var copy = text
                return try copy.withUTF8(body)
            case .record(let record, let start, let end):
                return try record.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[Int(start)..<Int(end)])) }
            }
        }

        /// The value's length in UTF-8 bytes.
        var valueCount: Int {
            switch storage {
            case .text(let text): text.utf8.count
            case .record(_, let start, let end): Int(end - start)
            }
        }

        public static func == (a: Header, b: Header) -> Bool { a.name == b.name && a.value == b.value }
    }

    public init(url: String, status: Int, requestTime: Double, responseTime: Double, headers: [Header],
                varyRequest: [Header] = [], hasBody: Bool = true, bodyLength: Int64 = 0, bodyDigest: String = "",
                bodyInode: UInt64 = 0, bodyMtimeNs: Int64 = 0, format: String? = nil, width: Int? = nil, height: Int? = nil) {
        // Each field that holds a reference is set once, here: none has an
        // initial value (a `var` spelled `String?` starts as nil). Set twice,
        // the second store frees the first value, and the optimizer then
        // copies the whole record out of the init (every reference retained)
        // and destroys the one it built (released): ~0.4 k instructions per
        // stored URL. Trivial fields (`digestAlgorithm`, `width`) may keep one.
        self.url = url
        self.storedKey = .text("")
        self.status = status
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.storedAt = responseTime
        self.storedHeaders = .list(headers)
        self.varyRequest = varyRequest
        self.hasBody = hasBody
        self.bodyLength = bodyLength
        self.storedDigest = .text(bodyDigest)
        self.bodyInode = bodyInode
        self.bodyMtimeNs = bodyMtimeNs
        self.format = format
        self.width = width
        self.height = height
    }
}
