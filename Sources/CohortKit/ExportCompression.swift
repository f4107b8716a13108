/// `--compression fast|default|best` of `cohort export` (and of the benchmark): zlib levels 1, 6
/// and 9.
public enum ExportCompression: String, CaseIterable, Sendable, Codable {
    /// zlib level 1: fastest, largest archive.
    case fast
    /// zlib level 6: zlib's and gzip's default.
    case `default`
    /// zlib level 9: smallest archive, slowest.
    case best

    /// The zlib (and `gzip -N`) level.
    public var level: Int {
        switch self {
        case .fast: 1
        case .default: 6
        case .best: 9
        }
    }
}
