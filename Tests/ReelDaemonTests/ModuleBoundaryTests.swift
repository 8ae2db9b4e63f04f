// The front ends reach the library only through the core: no file of ReelDaemon or reeld
// imports ReelLibrary. SwiftPM lets a target import any module its dependencies use, so this
// test keeps the rule that Package.swift states.
import Foundation
import Testing

@Suite struct ModuleBoundaryTests {
    /// The repository's root, from this file's place in it.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func swiftFiles(under folder: String) -> [URL] {
        let base = root.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { return [] }
        return walker.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
    }

    /// `import ReelLibrary`, in any of Swift's forms (`@testable`, `internal`, `import struct …`).
    static func importsLibrary(_ text: String) -> Bool {
        text.split(separator: "\n").contains { line in
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let position = words.firstIndex(of: "import"), words[..<position].allSatisfy({ !$0.hasPrefix("//") })
            else { return false }
            return words[(position + 1)...].contains { $0 == "ReelLibrary" || $0.hasPrefix("ReelLibrary.") }
        }
    }

    @Test func theRuleSeesEveryFormOfTheImport() {
        #expect(Self.importsLibrary("import ReelLibrary"))
        #expect(Self.importsLibrary("@testable import ReelLibrary"))
        #expect(Self.importsLibrary("internal import ReelLibrary"))
        #expect(Self.importsLibrary("import struct ReelLibrary.LibraryStore"))
        #expect(!Self.importsLibrary("import ReelLibraryTools\n// import ReelLibrary"))
    }

    @Test func noFrontEndFileImportsTheLibrary() throws {
        let files = Self.swiftFiles(under: "Sources/ReelDaemon") + Self.swiftFiles(under: "Sources/reeld")
        #expect(files.count > 50, "the sources were not found at \(Self.root.path)")
        let offenders = try files.filter { Self.importsLibrary(try String(contentsOf: $0, encoding: .utf8)) }
        #expect(offenders.isEmpty, "front-end files import ReelLibrary: \(offenders.map(\.lastPathComponent))")
    }

    @Test func packageSwiftGivesTheDaemonNoLibraryDependency() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        for target in ["ReelDaemon", "reeld"] {
            let start = try #require(manifest.range(of: "name: \"\(target)\""), "no target \(target)")
            // The target's declaration runs to the next one.
            let rest = manifest[start.upperBound...]
            let ends = [".target(", ".executableTarget(", ".testTarget("].compactMap { rest.range(of: $0)?.lowerBound }
            let declaration = rest[..<(ends.min() ?? rest.endIndex)]
            #expect(!declaration.contains("\"ReelLibrary\""), "\(target) depends on ReelLibrary")
        }
    }
}
