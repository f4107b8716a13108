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
        let studyProtocol = try workspace.currentProtocol().studyProtocol
        if let studyID, studyID != studyProtocol.id {
            throw CohortError(.notFound, "this workspace holds study '\(studyProtocol.id)', not '\(studyID)'", hint: "pass --workspace for the study's workspace")
        }
        let screen = try sampleScreen(participantCode: participantCode, studyProtocol: studyProtocol)
        let export = try AppleHealthExport(url: url)
        let info = ImportBatchInfo(fileName: url.lastPathComponent, fileSHA256: try Self.fileSHA256(export.identifyingFile), format: "apple-health")
        var skipped: [String: Int] = export.skippedFiles
        var meCheck = "absent"
        let xmlName = export.xmlName
        let progress = self.progress
        _ = try workspace.store.importBatch(info, actor: workspace.actor, at: workspace.now()) { inserter in
            var seen = 0
            let reader = try AppleHealthReader(
                name: xmlName, keepMetadata: Set(studyProtocol.importSettings.appleHealthKeepMetadata),
                onSample: { sample in
                    seen += 1
                    if seen % 100_000 == 0 { progress?(seen) }
                    try screen.take(sample, into: inserter)
                },
                onMe: { me in
                    meCheck = try Self.check(me, against: screen.participant.participant, code: participantCode, file: xmlName)
                })
            try export.streamXML { try reader.feed($0) }
            try reader.finish()
            try screen.settle(inserter)
            for (key, value) in reader.skipped { skipped[key, default: 0] += value }
            return screen.totals
        }
        try workspace.checkpoint()
        return AppleHealthImportSummary(
            file: url.path, participant: participantCode, types: screen.counts.values.sorted { $0.type < $1.type }, skipped: skipped,
            meCheck: meCheck, seconds: Date().timeIntervalSince(started))
    }

    /// The screen for the samples of the participant with study code `code`: the kinds the
    /// protocol collects and the participant's ``RecordWindow`` (study period, consent).
    func sampleScreen(participantCode code: String, studyProtocol: StudyProtocol) throws -> AppleHealthSampleScreen {
        guard let stored = try workspace.store.participant(code: code, withIdentity: true) else {
            throw CohortError(.notFound, "no enrolled participant has this study code", at: .init(field: "--participant"),
                hint: "list them with `cohort participant list`")
        }
        let participant = stored.participant
        guard let timeZone = TimeZone(identifier: participant.timeZone) else {
            throw CohortError(.invalidInput, "participant \(code) has an unknown time zone")
        }
        let admission = try StoreSubjects(workspace: workspace).admissions(studyProtocol: studyProtocol)[participant.id]
        let window = RecordWindow(
            enrolledOn: participant.enrolledOn, timeZone: timeZone, durationDays: studyProtocol.durationDays, now: workspace.now(),
            admission: admission)
        return AppleHealthSampleScreen(
            participant: stored, code: code, collected: Set(RecordKind.allCases.filter { studyProtocol.collects($0) }), window: window)
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
