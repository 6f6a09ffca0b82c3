import Foundation
import Glibc

/// Locations inside the package and its build products.
public enum Paths {
    /// The folder containing Package.swift (found by walking up from this source file).
    public static var packageRoot: String {
        var dir = (#filePath as NSString).deletingLastPathComponent
        while dir != "/" && !dir.isEmpty {
            if FileManager.default.fileExists(atPath: dir + "/Package.swift") { return dir }
            dir = (dir as NSString).deletingLastPathComponent
        }
        // Fallback: Tests/TestSupport/Paths.swift -> three levels up.
        let file = #filePath as NSString
        return ((file.deletingLastPathComponent as NSString).deletingLastPathComponent as NSString)
            .deletingLastPathComponent
    }

    /// packageRoot/Fixtures
    public static var fixtures: String {
        packageRoot + "/Fixtures"
    }

    /// The folder holding the running test executable (e.g. `.build/x86_64-unknown-linux-gnu/debug`).
    public static var buildProductsDirectory: String {
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return (exe as NSString).deletingLastPathComponent
        }
        let main = Bundle.main.bundleURL.path
        return main.hasSuffix(".xctest") ? (main as NSString).deletingLastPathComponent : main
    }

    /// Path of the built executable `name`, looked up next to the running test executable,
    /// then in `packageRoot/.build/debug`. Returns the last candidate even if it does not exist
    /// (so a failing test shows where it looked).
    public static func builtProduct(_ name: String) -> String {
        var candidates: [String] = []
        let products = buildProductsDirectory
        candidates.append(products + "/" + name)
        // A test bundle directory (e.g. Foo.xctest/...) one level deeper than the products folder.
        candidates.append((products as NSString).deletingLastPathComponent + "/" + name)
        let mainURL = Bundle.main.bundleURL.path
        candidates.append(mainURL + "/" + name)
        candidates.append((mainURL as NSString).deletingLastPathComponent + "/" + name)
        candidates.append(packageRoot + "/.build/debug/" + name)
        for c in candidates where FileManager.default.isExecutableFile(atPath: c) {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: c, isDirectory: &isDir), !isDir.boolValue {
                return c
            }
        }
        return packageRoot + "/.build/debug/" + name
    }
}
