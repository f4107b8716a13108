import CohortCore
import CohortImport
import CohortIO
import CohortStore
import Foundation

/// Takes the records an outside source's reader produces, one at a time: validates each through
/// ``RecordValidator`` and stores it, counts one outside the study's window (``outside``), and —
/// with a rejects file — writes a refused one there and counts its reason; without one, the
/// first refusal is thrown (nothing is stored).
final class ExternalRecordIntake {
    let validator: RecordValidator
    let handles: [ParticipantHandle]
    /// The rejects file, nil when refusals are thrown.
    let rejects: RejectsWriter?
    /// Whether a refusal's field names its file (a folder of FHIR files).
    let namesFiles: Bool
    let progress: (@Sendable (Int) -> Void)?
    /// Records validated and handed to the store.
    private(set) var accepted = 0
    /// Records outside the study period or consent, by reason.
    private(set) var outside: [String: Int] = [:]
    /// Records imported, by metric or kind.
    private(set) var imported: [String: Int] = [:]
    /// Refusals written to the rejects file, by reason.
    private(set) var rejected: [String: Int] = [:]

    init(validator: RecordValidator, handles: [ParticipantHandle], rejects: RejectsWriter?, namesFiles: Bool, progress: (@Sendable (Int) -> Void)?) {
        self.validator = validator
        self.handles = handles
        self.rejects = rejects
        self.namesFiles = namesFiles
        self.progress = progress
    }

    /// What a reader calls with a refusal of a resource or row that made no record: nil without a
    /// rejects file (the reader throws then).
    var rejecting: ((CohortError) throws -> Void)? {
        rejects == nil ? nil : { [self] in try reject($0, nil) }
    }

    /// Writes one refusal to the rejects file (the record's columns when there is a record) and
    /// counts its reason; without a rejects file, throws it.
    func reject(_ error: CohortError, _ record: SourceRecord?) throws {
        guard let rejects else { throw error }
        rejected[error.message, default: 0] += 1
        var field = error.location?.field ?? ""
        if namesFiles, let file = error.location?.file { field = URL(fileURLWithPath: file).lastPathComponent + ": " + field }
        try rejects.write(line: error.location?.line ?? 0, field: field, reason: error.message, fields: record?.columns ?? [:])
    }

    /// Validates `record` and adds it to `inserter`, or counts or rejects it.
    func take(_ record: SourceRecord, into inserter: any RecordSink) throws {
        let validated: (ParticipantHandle, Record)
        switch Result(catching: { try ExternalImporter.validate(record, with: validator, handles: handles) }) {
        case .success(let v): validated = v
        case .failure(let failure):
            guard var error = failure as? CohortError else { throw failure }
            if let reason = ExternalImporter.outsideReason(error) {
                outside[reason, default: 0] += 1
                return
            }
            let field = error.location?.field
            error.location = .init(file: record.file, line: record.line, field: field.map { record.origins[$0] ?? $0 })
            guard RecordValidator.refusesRowOnly(error) else { throw error }
            return try reject(error, record)
        }
        try inserter.add(validated.1, participant: validated.0)
        accepted += 1
        imported[record.item ?? record.kind, default: 0] += 1
        if accepted % 50_000 == 0 { progress?(accepted) }
    }
}
