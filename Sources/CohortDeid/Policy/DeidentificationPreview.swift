package import CohortCore
import FoundationEssentials

/// One field before and after de-identification, for the coordinator's preview (the `before`
/// values are identifiers: show them to the coordinator only, never export them).
public struct DeidentificationPreviewRow: Sendable, Hashable, Codable {
    /// `participant.zip`, `symptom_log.note`…
    public var field: String
    public var before: String?
    /// nil when the field is removed.
    public var after: String?

    package init(field: String, before: String?, after: String?) {
        self.field = field
        self.before = before
        self.after = after
    }
}

extension Deidentifier {
    /// Before/after pairs for `participant` and a sample of their records, so a coordinator can
    /// see what a policy does. Does not change ``stats``.
    public func preview(_ participant: Participant, records: [Record]) -> [DeidentificationPreviewRow] {
        var copy = self
        let after = copy.participant(participant)
        let identity = participant.identity
        var rows: [DeidentificationPreviewRow] = []
        func add(_ field: String, _ before: String?, _ after: String?) {
            rows.append(DeidentificationPreviewRow(field: field, before: before, after: after))
        }
        add("participant.id", participant.id.uuidString.lowercased(), after.pseudonym)
        add("participant.code", participant.code, nil)
        add("participant.name", identity?.name, nil)
        add("participant.email", identity?.email, nil)
        add("participant.phone", identity?.phone, nil)
        add("participant.address", identity?.address, nil)
        add("participant.mrn", identity?.mrn, nil)
        add("participant.birth_date", identity?.birthDate?.description, after.birthYear.map(String.init))
        add("participant.age", identity?.birthDate.map { String($0.age(on: participant.enrolledOn)) }, after.ageBand)
        add("participant.zip", identity?.zip, after.zip3)
        add("participant.sex", participant.sex.rawValue, after.sex?.rawValue)
        add("participant.enrolled_on", participant.enrolledOn.description, after.enrolledOn?.description)
        add("participant.status", participant.status.rawValue, after.status?.rawValue)
        if participant.withdrawnAt != nil || after.withdrawnAt != nil {
            add("participant.withdrawn_at", participant.withdrawnAt?.iso8601, after.withdrawnAt?.iso8601)
        }
        add("participant.time_zone", participant.timeZone, after.timeZone)
        add("participant.devices", identity.map { $0.devices.joined(separator: "; ") }, after.devices?.joined(separator: "; "))
        for record in records {
            // A record dated after the reference day is left out: every field shows as removed.
            let out = copy.record(record, of: participant) ?? DeidentifiedRecord(pseudonym: after.pseudonym, kind: record.kind)
            let table = record.kind.dataType.rawValue
            add("\(table).start", record.start.iso8601, out.start?.iso8601)
            if record.end != nil { add("\(table).end", record.end?.iso8601, out.end?.iso8601) }
            if let value = record.value { add("\(table).value", String(value), out.value.map { String($0) } ?? out.valueLabel) }
            if record.text != nil { add("\(table).text", record.text, out.text) }
            if record.source != nil { add("\(table).source", record.source, out.source) }
            if record.note != nil { add("\(table).note", record.note, out.note) }
        }
        return rows
    }
}
