import ArgumentParser

/// `--compression fast|default|best`: zlib levels 1, 6, 9 (the `gzip` reference uses the same level).
enum CompressionChoice: String, CaseIterable, ExpressibleByArgument, Codable, Sendable {
    case fast
    case `default`
    case best

    var level: Int {
        switch self {
        case .fast: 1
        case .default: 6
        case .best: 9
        }
    }
}
