public import Foundation

/// The example protocols and templates compiled into the binary, for commands that need them as
/// files (the demo, the benchmark, `cohort protocol examples`).
public enum ExampleFiles {
    /// Paths relative to the project root, sorted (`protocols/minimal.yaml`, `templates/…`).
    public static var paths: [String] { EmbeddedResources.files.keys.sorted() }

    /// The text of the embedded file at `path` (relative to the project root), if there is one.
    public static func text(_ path: String) -> String? { EmbeddedResources.files[path] }

    /// Writes every embedded file under `directory` (creating `protocols/` and `templates/`),
    /// so a protocol and the consent templates it names load exactly as from the source tree.
    /// Existing files of the same name are replaced; nothing else in `directory` is touched.
    public static func write(into directory: URL) throws {
        let fm = FileManager.default
        for path in paths {
            let url = directory.appendingPathComponent(path)
            try fm.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data((EmbeddedResources.files[path] ?? "").utf8).write(to: url, options: .atomic)
        }
    }

    /// A fresh temporary folder holding the embedded files; the caller removes it.
    public static func temporaryCopy() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-files-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try write(into: directory)
        return directory
    }
}
