import CohortCore
import CohortCrypto
import CohortImport
import CohortStore
public import Foundation

/// Imports one participant's Apple Health export (the zip, its folder, or export.xml) into the
/// store: the XML is streamed (constant memory), each sample mapped to a record kind, and stored
/// when the protocol collects the kind, the sample lies in the participant's study period and
/// consent allows it. One transaction per export: a malformed or truncated file stores nothing.
///
/// Privacy on the way in: sources keep only the device's product type; metadata values (except
/// the non-identifying keys the protocol's `import.apple_health.keep_metadata` names, which go
/// into the record's note as `key=value; …`, encrypted at rest like every note), routes,
/// ECGs, clinical records and the CDA document are never read into the store (they are
/// counted); `Me` (date of birth, sex) is compared with the roster and never stored — a
/// mismatch is an error naming neither value.
///
/// De-duplication: a record is the same when participant, kind, start and source are (the
/// store's unique key; the end is part of the sample Apple writes once per start and source), so
/// importing a newer export of the same participant adds only what is new.
public struct AppleHealthImporter: Sendable {
    /// The workspace whose store receives the records.
    public let workspace: Workspace
    /// Called with the number of samples read so far.
    public var progress: (@Sendable (Int) -> Void)?

    /// An importer into `workspace`; `progress` is called with the number of samples read so far.
    public init(workspace: Workspace, progress: (@Sendable (Int) -> Void)? = nil) {
        self.workspace = workspace
        self.progress = progress
    }

    /// Imports the export at `url` for the participant with study code `participantCode`.
    public func importExport(_ url: URL, participantCode: String, studyID: String? = nil) throws -> AppleHealthImportSummary {
        let started = Date()
        let pinned = try workspace.currentProtocol()
        let studyProtocol = pinned.studyProtocol
        if let studyID, studyID != studyProtocol.id {
            throw CohortError(.notFound, "this workspace holds study '\(studyProtocol.id)', not '\(studyID)'", hint: "pass --workspace for the study's workspace")
        }
        guard let stored = try workspace.store.participant(code: participantCode, withIdentity: true) else {
            throw CohortError(.notFound, "no enrolled participant has this study code", at: .init(field: "--participant"),
                hint: "list them with `cohort participant list`")
        }
        let participant = stored.participant
        guard let timeZone = TimeZone(identifier: participant.timeZone) else {
            throw CohortError(.invalidInput, "participant \(participantCode) has an unknown time zone")
        }
        let export = try AppleHealthExport(url: url)
        let admission = try StoreSubjects(workspace: workspace).admissions(studyProtocol: studyProtocol)[participant.id]
        let firstLocal = Int64(participant.enrolledOn.daysSinceEpoch) * 86_400_000
        let lastLocal = Int64(participant.enrolledOn.adding(days: studyProtocol.durationDays).daysSinceEpoch) * 86_400_000
        let firstMs = firstLocal - Int64(Timestamp.resolveOffset(localMs: firstLocal, in: timeZone)) * 1000
        let lastMs = lastLocal - Int64(Timestamp.resolveOffset(localMs: lastLocal, in: timeZone)) * 1000
        let nowMs = Int64(workspace.now().timeIntervalSince1970 * 1000)
        let collected = Set(RecordKind.allCases.filter { studyProtocol.collects($0) })
        let digest = try Self.fileSHA256(export.identifyingFile)
        let info = ImportBatchInfo(fileName: url.lastPathComponent, fileSHA256: digest, format: "apple-health")

        var counts: [String: AppleHealthImportSummary.TypeCounts] = [:]
        var skipped: [String: Int] = export.skippedFiles
        var meCheck = "absent"
        let xmlName = export.xmlName
        let progress = self.progress
        _ = try workspace.store.importBatch(info, actor: workspace.actor, at: workspace.now()) { inserter in
            // Records are queued per type (exports come grouped by type) so the inserter's count
            // before and after a flush tells each type's new rows from its duplicates.
            var pendingType: String?
            var pendingAccepted = 0
            var insertedBefore = 0
            func settle() throws {
                guard let type = pendingType else { return }
                try inserter.flush()
                let inserted = inserter.insertedCount - insertedBefore
                counts[type]?.imported += inserted
                counts[type]?.duplicates += pendingAccepted - inserted
                insertedBefore = inserter.insertedCount
                pendingAccepted = 0
                pendingType = nil
            }
            var seen = 0
            let reader = try AppleHealthReader(
                name: xmlName, keepMetadata: Set(studyProtocol.importSettings.appleHealthKeepMetadata),
                onSample: { sample in
                    seen += 1
                    if seen % 100_000 == 0 { progress?(seen) }
                    if counts[sample.type] == nil {
                        counts[sample.type] = .init(type: sample.type, kind: sample.kind?.rawValue)
                    }
                    counts[sample.type]?.seen += 1
                    switch sample.outcome {
                    case .notCollected: counts[sample.type]?.notCollected += 1; return
                    case .unitRefused: counts[sample.type]?.unitRefused += 1; return
                    case .valueRefused: counts[sample.type]?.valueRefused += 1; return
                    case .mapped: break
                    }
                    guard let kind = sample.kind, collected.contains(kind) else {
                        counts[sample.type]?.notCollected += 1
                        return
                    }
                    let start = sample.start.epochMilliseconds
                    guard start >= firstMs, start < lastMs, start <= nowMs + 5 * 60_000 else {
                        counts[sample.type]?.outsideStudyPeriod += 1
                        return
                    }
                    guard let value = sample.value, kind.range.contains(value), !kind.isInteger || value.rounded() == value else {
                        counts[sample.type]?.valueRefused += 1
                        return
                    }
                    // No admission rule (a time zone the consent rules do not know) admits nothing.
                    if admission.map({ $0.refusal(at: sample.start) != nil }) ?? true {
                        counts[sample.type]?.notConsented += 1
                        return
                    }
                    if pendingType != sample.type { try settle() }
                    pendingType = sample.type
                    pendingAccepted += 1
                    try inserter.add(
                        Record(
                            participantID: participant.id, kind: kind, start: sample.start, end: sample.end, value: value, text: sample.text,
                            source: sample.source, note: sample.metadata),
                        participant: stored.handle)
                },
                onMe: { me in
                    meCheck = try Self.check(me, against: participant, code: participantCode, file: xmlName)
                })
            try export.streamXML { try reader.feed($0) }
            try reader.finish()
            try settle()
            for (key, value) in reader.skipped { skipped[key, default: 0] += value }
            let total = counts.values.reduce(into: (seen: 0, imported: 0, duplicates: 0)) { t, c in
                t.seen += c.seen
                t.imported += c.imported
                t.duplicates += c.duplicates
            }
            return (total.seen, total.imported, total.duplicates, total.seen - total.imported - total.duplicates)
        }
        try workspace.checkpoint()
        return AppleHealthImportSummary(
            file: url.path, participant: participantCode, types: counts.values.sorted { $0.type < $1.type }, skipped: skipped, meCheck: meCheck,
            seconds: Date().timeIntervalSince(started))
    }

    /// Compares the export's `Me` with the roster: a difference in what both know is an error
    /// naming neither value. Returns `matched` or `absent` (nothing both sides know).
    static func check(_ me: AppleHealthMe, against participant: Participant, code: String, file: String) throws -> String {
        var compared = false
        if let exported = me.birthDate, let rostered = participant.identity?.birthDate {
            guard exported == rostered else {
                throw CohortError(.invalidInput, "the export's date of birth (Me) does not match the roster's for participant \(code)",
                    at: .init(file: file, field: "HKCharacteristicTypeIdentifierDateOfBirth"),
                    hint: "check that this is participant \(code)'s export; correct the roster if it is wrong")
            }
            compared = true
        }
        if let exported = me.sex, participant.sex != .unknown {
            guard exported == participant.sex else {
                throw CohortError(.invalidInput, "the export's biological sex (Me) does not match the roster's for participant \(code)",
                    at: .init(file: file, field: "HKCharacteristicTypeIdentifierBiologicalSex"),
                    hint: "check that this is participant \(code)'s export; correct the roster if it is wrong")
            }
            compared = true
        }
        return compared ? "matched" : "absent"
    }

    static func fileSHA256(_ path: String) throws -> String {
        try RecordImporter.fileSHA256(URL(fileURLWithPath: path))
    }
}

extension AppleHealthImporter {
    /// Whether `url` looks like an Apple Health export (read from its first bytes only).
    static func looksLikeExport(_ url: URL) -> Bool { AppleHealthExport.looksLikeExport(url) }
}
