public import CohortCore
import Yams

/// `cohort protocol show`: a loaded protocol as YAML (sorted keys) or canonical JSON.
public enum ProtocolRendering {
    /// The normalized protocol as YAML with sorted keys.
    public static func yaml(_ studyProtocol: StudyProtocol) throws -> String {
        let encoder = YAMLEncoder()
        encoder.options.sortKeys = true
        return try encoder.encode(studyProtocol)
    }

    /// The protocol as indented canonical JSON.
    public static func json(_ studyProtocol: StudyProtocol) throws -> String {
        String(decoding: try CanonicalJSON.pretty(studyProtocol), as: UTF8.self)
    }
}
