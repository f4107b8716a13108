import Foundation
import Testing

@testable import CohortKit

/// The compiled-in protocols and templates are exactly the files under protocols/ and templates/.
struct ExampleFilesTests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func filesOnDisk() -> [String] {
        var paths: [String] = []
        for folder in ["protocols", "templates"] {
            let base = repositoryRoot.appendingPathComponent(folder)
            guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: [.isRegularFileKey]) else { continue }
            for case let url as URL in walker where (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                paths.append(folder + "/" + url.path.dropFirst(base.path.count + 1))
            }
        }
        return paths.sorted()
    }

    @Test func everyFileIsEmbeddedByteForByte() throws {
        let onDisk = Self.filesOnDisk()
        #expect(onDisk.count >= 8)
        #expect(ExampleFiles.paths == onDisk, "run scripts/embed-resources.py after changing protocols/ or templates/")
        for path in onDisk {
            let data = try Data(contentsOf: Self.repositoryRoot.appendingPathComponent(path))
            #expect(ExampleFiles.text(path).map { Data($0.utf8) } == data, "\(path) differs from its embedded copy: run scripts/embed-resources.py")
        }
    }

    @Test func writtenCopiesLoadAsProtocols() throws {
        let directory = try ExampleFiles.temporaryCopy()
        defer { try? FileManager.default.removeItem(at: directory) }
        for path in ExampleFiles.paths {
            let data = try Data(contentsOf: directory.appendingPathComponent(path))
            #expect(String(decoding: data, as: UTF8.self) == ExampleFiles.text(path))
        }
    }
}
