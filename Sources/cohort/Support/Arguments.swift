public import ArgumentParser
import CohortCrypto
import CohortKit
import CohortCore
import Foundation

/// `--format`: how a command prints its data.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case table
    case json
    case csv

    /// Refuses `csv` (a usage error, exit 2) for a command whose output is not a list of rows.
    func refusingCSV(_ command: String) throws {
        if self == .csv { throw ValidationError("\(command) has no CSV output: use --format table or --format json") }
    }
}

/// `--format` for a command whose output is a report, not rows: `table` or `json`. `csv` parses
/// (so the command can refuse it with exit 2 and say why) but is not offered in `--help`.
enum ReportFormat: String, ExpressibleByArgument, CaseIterable {
    case table
    case json
    case csv

    static var allCases: [ReportFormat] { [.table, .json] }

    /// Refuses `csv` (a usage error, exit 2): the command's output is not a list of rows.
    func refusingCSV(_ command: String) throws {
        if self == .csv { throw ValidationError("\(command) has no CSV output: use --format table or --format json") }
    }
}

extension SharingScope: ExpressibleByArgument {}
extension ExportAudience: ExpressibleByArgument {}
extension WithdrawalMode: ExpressibleByArgument {}
extension ExportCompression: ExpressibleByArgument {}
extension FHIRLayout: ExpressibleByArgument {}
extension CMSEnvelope.ContentCipher: ExpressibleByArgument {}

/// `--outputs csv,json,fhir`: the files an export writes.
struct ExportFormatList: ExpressibleByArgument {
    var formats: Set<ExportFormat>

    init?(argument: String) {
        var formats: Set<ExportFormat> = []
        for name in argument.split(separator: ",") {
            guard let format = ExportFormat(rawValue: name.trimmingCharacters(in: .whitespaces)) else { return nil }
            formats.insert(format)
        }
        guard !formats.isEmpty else { return nil }
        self.formats = formats
    }

    static var allValueStrings: [String] { ["csv", "json", "fhir"] }
}

/// A date `YYYY-MM-DD` (noon UTC of that day) or an ISO 8601 instant with offset (`--as-of`, `--since`).
struct DateOrInstant: ExpressibleByArgument {
    var text: String
    var date: Date

    init?(argument: String) {
        guard let date = try? ComplianceService.asOf(argument, now: Date()) else { return nil }
        self.text = argument
        self.date = date
    }

    /// The start of the day for a plain date (so `--since 2026-11-20` includes that whole day UTC).
    var startOfDay: Date {
        if let day = CivilDate(iso: text) { return Date(timeIntervalSince1970: Double(day.daysSinceEpoch) * 86_400) }
        return date
    }
}

/// An ISO 8601 instant with a UTC offset (`--signed-at`, `--created-at`).
struct Instant: ExpressibleByArgument {
    var timestamp: Timestamp

    init?(argument: String) {
        guard let t = Timestamp.parse(argument, defaultTimeZone: nil) else { return nil }
        timestamp = t
    }
}

/// A rate as a fraction (`0.8`) or a percentage (`80%`) — `--below`.
struct Rate: ExpressibleByArgument {
    var value: Double

    init?(argument: String) {
        guard let value = try? TextOutput.rate(argument) else { return nil }
        self.value = value
    }
}
