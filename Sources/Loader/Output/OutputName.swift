import ImageFormats
import func Support.trimWhitespaceLower

/// The name a URL's file gets in `--output-dir`: a `--name` template
/// expanded (default `{name}`: the URL's last path segment), or the name
/// an input line gave (`URL<TAB>name`), made safe. Pure: no I/O.
///
/// Safe means a relative path of plain components that stays inside the
/// directory: `/` separates components (a template may make folders); each
/// component is percent-decoded, then empty, `.` and `..` components are
/// dropped, a leading `/` is ignored, control characters become `_`, and a
/// component longer than 255 bytes is shortened (its extension kept). A `/`
/// or `\` that decoding brings into a component (`..%2F..%2Fetc`) joins
/// what is around it with `_`, once empty, `.` and `..` pieces are dropped:
/// `etc`, not `.._.._etc` (a hidden file, named after a path it is not in).
/// A name with nothing left becomes `{md5}.{ext}`.
///
/// `{name}` at the end of a template (the default) ends with an extension of
/// the body's image format: `photo` and `photo.php?id=7` holding a PNG
/// become `photo.png` and `photo.php.png`, `cat.jpeg` holding a JPEG stays
/// (any usual extension of the format counts, in any case). A name an input
/// line gave, another template, and a body that is not an image are left as they are.
public struct OutputName: Sendable {
    /// `{name}`: the URL's last path segment.
    public static let defaultTemplate = "{name}"
    public static let variables = ["{name}", "{host}", "{path}", "{md5}", "{ext}"]
    public static let maxComponentBytes = 255

    public let template: String

    public init(template: String = OutputName.defaultTemplate) { self.template = template }

    /// Why a `--name` template cannot be used, or nil.
    public static func problem(with template: String) -> String? {
        var rest = template
        for variable in variables { rest = rest.replacing(variable, with: "") }
        if rest.contains("{") || rest.contains("}") {
            return "--name '\(template)' has an unknown {variable}; the accepted ones are \(variables.joined(separator: ", "))"
        }
        return nil
    }

    /// The path components for `url`, safe to create under the directory.
    /// `md5` is the cache key; `format` the image format, if known;
    /// `contentType` the response's `Content-Type`, if any.
    public func components(url: String, given: String?, md5: String, format: ImageFormat?,
                           contentType: String? = nil) -> [String] {
        let parts = URLParts(url)
        let ext = Self.fileExtension(format: format, contentType: contentType, name: parts.lastSegment)
        let text: String
        if let given {
            text = given
        } else {
            text = template
                .replacing("{name}", with: parts.lastSegment)
                .replacing("{host}", with: parts.host)
                .replacing("{path}", with: parts.path)
                .replacing("{md5}", with: md5)
                .replacing("{ext}", with: ext)
        }
        var safe = Self.safeComponents(text)
        if given == nil, template.hasSuffix("{name}") {
            if template == "{name}" || template.hasSuffix("/{name}"), Self.safeComponents(parts.lastSegment).isEmpty {
                // The name has nothing left (`https://host/`): the file is named by its key, in the
                // folders the rest of the template made (`{host}/{name}` → `host/<md5>.png`, never a
                // file `host.png`).
                safe.append("\(md5).\(ext)")
            } else if let format, let last = safe.last {
                safe[safe.count - 1] = Self.withExtension(of: format, last)
            }
        }
        return safe.isEmpty ? ["\(md5).\(ext)"] : safe
    }

    public static func safeComponents(_ text: String) -> [String] {
        text.split(separator: "/", omittingEmptySubsequences: true).compactMap { raw -> String? in
            let decoded = percentDecoded(String(raw))
            // A separator decoding brought in joins the pieces around it, none of them a way up.
            let pieces = decoded.split(whereSeparator: { $0 == "/" || $0 == "\\" }).filter { $0 != "." && $0 != ".." }
            var scalars = String.UnicodeScalarView()
            for scalar in pieces.joined(separator: "_").unicodeScalars {
                let control = scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                scalars.append(control ? "_" : scalar)
            }
            let component = String(scalars)
            if component.isEmpty || component == "." || component == ".." { return nil }
            return shortened(component)
        }
    }

    /// `name` when it ends with an extension of `format` (`cat.JPEG` for a
    /// JPEG), else `name` with the format's own appended (`photo` →
    /// `photo.png`, `photo.php` → `photo.php.png`), shortened to fit.
    public static func withExtension(of format: ImageFormat, _ name: String) -> String {
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            let ext = name[name.index(after: dot)...].lowercased()
            if ext == format.fileExtension || ext == format.name || otherExtensions[format.name]?.contains(ext) == true { return name }
        }
        return shortened(name + "." + format.fileExtension)
    }

    /// Extensions files of a format also go by, beside its `fileExtension` and its name.
    static let otherExtensions: [String: Set<String>] = [
        "jpeg": ["jpe", "jfif", "pjpeg", "pjp"], "tiff": ["tif"], "heif": ["heic", "hif", "heics", "heifs"], "bmp": ["dib"],
        "ico": ["cur"], "svg": ["svgz"], "png": ["apng"],
    ]

    /// At most `maxComponentBytes` of UTF-8, cut on a character boundary, extension kept.
    public static func shortened(_ component: String) -> String {
        guard component.utf8.count > maxComponentBytes else { return component }
        let dot = component.lastIndex(of: ".").map { String(component[$0...]) } ?? ""
        let keep = dot.utf8.count <= 16 ? dot : ""
        var stem = ""
        for character in component where stem.utf8.count + character.utf8.count + keep.utf8.count <= maxComponentBytes {
            stem.append(character)
        }
        return stem + keep
    }

    /// `png`, `jpg`, … from the sniffed format, else from the content type
    /// (`text/html` → `html`, with `--any`), else the name's own, else `bin`.
    public static func fileExtension(format: ImageFormat?, contentType: String? = nil, name: String) -> String {
        if let format { return format.fileExtension }
        if let contentType, let ext = fileExtension(mediaType: contentType) { return ext }
        if let dot = name.lastIndex(of: "."), name.index(after: dot) < name.endIndex {
            let ext = name[name.index(after: dot)...]
            if ext.count <= 8, ext.allSatisfy({ $0.isLetter || $0.isNumber }) { return String(ext) }
        }
        return "bin"
    }

    /// The extension a media type's files take, nil for one not listed
    /// (`application/octet-stream` says nothing): an image format's
    /// (`image/jpeg` → `jpg`), else `extensionsByMediaType`'s. Parameters
    /// (`; charset=utf-8`) and case do not count.
    static func fileExtension(mediaType contentType: String) -> String? {
        let type = trimWhitespaceLower(contentType.split(separator: ";", maxSplits: 1).first ?? "")
        if let format = ImageFormat.all.first(where: { $0.mediaType == type }) { return format.fileExtension }
        return extensionsByMediaType[type]
    }

    /// Extensions of the media types a server sends for what is not an
    /// image (fetched with `--any`).
    static let extensionsByMediaType = [
        "text/html": "html", "application/xhtml+xml": "xhtml", "text/plain": "txt", "text/css": "css",
        "text/csv": "csv", "text/javascript": "js", "application/javascript": "js", "application/json": "json",
        "application/xml": "xml", "text/xml": "xml", "application/pdf": "pdf", "application/zip": "zip",
        "application/gzip": "gz", "image/jpg": "jpg", "image/x-icon": "ico", "video/mp4": "mp4", "audio/mpeg": "mp3",
    ]

    /// `%41` → `A`; invalid escapes and invalid UTF-8 stay as they are.
    public static func percentDecoded(_ text: String) -> String {
        guard text.contains("%") else { return text }
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == 0x25, utf8.count >= 2,
               let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self) ?? text
    }
}
