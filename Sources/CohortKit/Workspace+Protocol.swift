import CohortCore
public import CohortStore
public import Foundation

/// The study protocol a workspace follows: loading, pinning and reading the current revision.
extension Workspace {
    /// Loads and pins a protocol file (with the templates it names) as the current revision.
    @discardableResult
    public func loadProtocol(_ url: URL) throws -> PinnedProtocol {
        let pinned = try pin(try ProtocolLoader.load(contentsOf: url))
        try checkpoint()
        return pinned
    }

    @discardableResult
    func pin(_ loaded: LoadedProtocol) throws -> PinnedProtocol {
        var templates: [String: Data] = [:]
        let root = loaded.source.map { $0.deletingLastPathComponent().deletingLastPathComponent() } ?? directory
        var paths = loaded.studyProtocol.consent.documents.map(\.template)
        if let reminder = loaded.studyProtocol.compliance.reminderTemplate { paths.append(reminder) }
        for path in paths {
            let url = root.appendingPathComponent(path)
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw CohortError(.notFound, "template '\(path)' named by the protocol cannot be read", at: .init(file: url.path))
            }
            templates[path] = data
        }
        return try store.pinProtocol(loaded, templates: templates, actor: actor, at: now())
    }

    /// The current protocol, or an error telling how to load one.
    public func currentProtocol() throws -> PinnedProtocol {
        guard let pinned = try store.currentProtocol() else {
            throw CohortError(.notFound, "no protocol is loaded in this workspace", hint: "run `cohort protocol load protocols/<study>.yaml`")
        }
        return pinned
    }
}
