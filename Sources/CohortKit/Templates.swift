import CohortCore
import CohortStore
import Foundation
import Mustache

/// Renders the Mustache templates a protocol names (as pinned in the workspace), and cohort's
/// own templates (receipts, export README) from the project's `templates/`.
enum Templates {
    static func render(_ text: String, _ context: [String: Any], name: String) throws -> String {
        do {
            return try MustacheTemplate(string: text).render(context)
        } catch {
            throw CohortError(.invalidInput, "the template cannot be parsed", at: .init(file: name), hint: "check its Mustache syntax")
        }
    }

    /// The pinned text of `path` under the current protocol.
    static func pinned(_ path: String, workspace: Workspace) throws -> String {
        let pinned = try workspace.currentProtocol()
        guard let data = try workspace.store.template(path: path, protocolSHA256: pinned.sha256) else {
            throw CohortError(.notFound, "template '\(path)' is not pinned with the current protocol", hint: "reload the protocol: `cohort protocol load FILE`")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The study details every document may use.
    static func studyContext(_ p: StudyProtocol) -> [String: Any] {
        [
            "study_id": p.id, "title": p.title, "institution": p.institution, "investigator": p.principalInvestigator.name,
            "irb_board": p.irb.board, "irb_approval": p.irb.approvalNumber, "irb_expires": p.irb.expires.description,
            "duration_days": p.durationDays, "revision": p.revision,
            "data_types": p.dataTypes.keys.sorted().map { type -> [String: Any] in
                ["name": type.rawValue.replacingOccurrences(of: "_", with: " "), "kinds": (p.dataTypes[type] ?? []).map { $0.rawValue.replacingOccurrences(of: "_", with: " ") }.joined(separator: ", ")]
            },
        ]
    }

    /// cohort's own template `name` (`templates/<name>`), compiled into the binary: the same
    /// text whatever the working directory, so exports are byte-identical from any folder.
    static func builtIn(_ name: String, fallback: String) -> String {
        ExampleFiles.text("templates/\(name)") ?? fallback
    }
}
