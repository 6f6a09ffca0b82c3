import DiskCache
import Foundation
import Loader
import Testing
import TestSupport

/// Opening the cache as the tool opens it (`CacheOpening`): which problems
/// are slips (`usage`, the tool points at its help) and which the machine's
/// (`io`, with the path), and the maintenance commands' "no directory, no
/// entries" that makes nothing.
@Suite struct CacheOpeningTests {
    /// What `open` threw, or nil.
    func problem(_ open: () throws -> Void) -> LoadError? {
        do {
            try open()
            return nil
        } catch {
            return error as? LoadError
        }
    }

    @Test func anEmptyCacheDirIsASlipAndAnUnusablePathTheMachines() throws {
        let temp = try TempDirectory(prefix: "asyncfetch-opening")
        let empty = [problem { _ = try CacheOpening.store(explicit: "") }, problem { _ = try CacheOpening.directory(explicit: "") },
                     problem { _ = try CacheOpening.storeIfPresent(explicit: "") }]
        for error in empty {
            #expect(error?.kind == .usage && error?.message.hasPrefix("--cache-dir is empty") == true, "\(String(describing: error))")
        }
        // A file where the directory should be: the machine's problem, naming the path.
        let file = try temp.write("file", [1])
        for error in [problem { _ = try CacheOpening.store(explicit: file) }, problem { _ = try CacheOpening.storeIfPresent(explicit: file) }] {
            #expect(error?.kind == .io && error?.message.contains(file) == true, "\(String(describing: error))")
        }
        // `~` only a shell expands: taken as typed it would make a folder named `~`.
        let tilde = problem { _ = try CacheOpening.directory(explicit: "~/cache") }
        #expect(tilde?.kind == .io && tilde?.message.contains("a leading '~' is expanded only by a shell") == true, "\(String(describing: tilde))")
    }

    @Test func aMissingDirectoryIsMadeOnlyByStore() throws {
        let temp = try TempDirectory(prefix: "asyncfetch-opening")
        let missing = temp.file("cache")
        let absent = try CacheOpening.storeIfPresent(explicit: missing, writable: true)
        #expect(absent.store == nil && absent.directory == missing)
        #expect(!FileManager.default.fileExists(atPath: missing), "nothing is made for a command that finds nothing")
        #expect(try CacheOpening.directory(explicit: missing + "/") == missing, "resolved and normalised, not made")
        // An --offline run only looks: it makes nothing either, and finds no entries.
        let offline = try CacheOpening.runStore(explicit: missing, offline: true)
        #expect(offline.directory == missing && offline.lookup(String(repeating: "0", count: 32)) == nil)
        #expect(!FileManager.default.fileExists(atPath: missing))
        let store = try CacheOpening.runStore(explicit: missing, offline: false)
        #expect(store.directory == missing)
        let mode = try FileManager.default.attributesOfItem(atPath: missing)[.posixPermissions] as? Int
        #expect(mode == 0o700)
        let present = try CacheOpening.storeIfPresent(explicit: missing)
        #expect(present.store?.directory == missing && present.directory == missing)
    }
}
