/// What one measured phase did, as the phase process reports it (one JSON line on stdout).
struct PhaseResult: Codable, Sendable {
    var phase: String
    var seconds: Double
    var records: Int
    /// Bytes the phase read (import: data files; verify: archive).
    var inputBytes: Int
    /// Bytes the phase wrote (import: study.db; export: archive).
    var outputBytes: Int
    /// Export: the uncompressed bag payload (sum of file sizes).
    var payloadBytes: Int
    var peakRSSBytes: Int
    /// CPU time the phase used, user and system, on every thread (nil in results written before
    /// it was measured). With `seconds` and the core count it says how busy the cores were: a
    /// figure this machine's noise moves less than the wall time (issue 28, sixteenth round).
    var cpuSeconds: Double?
    /// Verify: every check passed.
    var passed: Bool
    var detail: String

    enum CodingKeys: String, CodingKey {
        case phase, seconds, records, detail, passed
        case inputBytes = "input_bytes"
        case outputBytes = "output_bytes"
        case payloadBytes = "payload_bytes"
        case peakRSSBytes = "peak_rss_bytes"
        case cpuSeconds = "cpu_seconds"
    }
}

/// A reference command timed in the same run (e.g. `gzip -6` over the same payload).
struct ReferenceResult: Codable, Sendable {
    var name: String
    var command: String
    var seconds: Double
    var inputBytes: Int

    enum CodingKeys: String, CodingKey {
        case name, command, seconds
        case inputBytes = "input_bytes"
    }
}
