import Glibc

/// A real nginx on 127.0.0.1 as a plain HTTP object store for the remote
/// cache tier: GET, PUT (creating directories) and DELETE below `/cache/`,
/// kept in a temporary directory.
public struct WebDAVStore: Sendable {
    public let directory: TempDirectory
    public let nginx: NginxServer
    /// The `--remote-cache` URL of the store.
    public var url: String { nginx.url("/cache/") }

    public init() throws {
        directory = try TempDirectory(prefix: "asyncfetch-remote")
        // nginx's workers run as nobody: they must be able to create files here,
        // and a PUT's body always goes through a temporary file first.
        chmod(directory.path, 0o777)
        nginx = try NginxServer(root: directory.path, extraConfig: """
            client_body_temp_path \(directory.path)/.bodies;
            location /cache/ { dav_methods PUT DELETE; create_full_put_path on; client_max_body_size 0; }
            """)
    }
}
