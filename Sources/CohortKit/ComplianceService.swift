public import CohortCompliance
import CohortCore
import CohortStore
public import Foundation

/// Compliance over the store (streamed) and reminder messages.
public struct ComplianceService: Sendable {
    /// The workspace whose store is read.
    public let workspace: Workspace
    /// A service over `workspace`.
    public init(workspace: Workspace) { self.workspace = workspace }

    /// Parses `--as-of`: a date (its 12:00 UTC is the current, open day) or an ISO instant.
    public static func asOf(_ text: String?, now: Date) throws -> Date {
        guard let text else { return now }
        if let date = CivilDate(iso: text) {
            return Date(timeIntervalSince1970: Double(date.daysSinceEpoch) * 86_400 + 43_200)
        }
        if let instant = Timestamp.parse(text, defaultTimeZone: nil) { return instant.date }
        throw CohortError.invalid("expected a date YYYY-MM-DD or an ISO 8601 instant", field: "as-of")
    }

    /// The compliance report as of `asOf`, streaming every record's start once; only the
    /// participants of `site` when given (``Workspace/participants(site:withIdentities:)``).
    public func report(asOf: Date, site: String? = nil) throws -> ComplianceReport {
        let p = try workspace.currentProtocol().studyProtocol
        var engine = ComplianceEngine(studyProtocol: p, asOf: asOf)
        var ids: [ParticipantHandle: UUID] = [:]
        for stored in try workspace.participants(site: site) where stored.participant.status != .erased {
            try engine.add(participant: ComplianceSubject(stored.participant).asOf(asOf))
            ids[stored.handle] = stored.participant.id
        }
        try workspace.store.forEachRecordStart { pk, kind, start in
            if let id = ids[pk] { engine.add(recordOf: id, kind: kind, start: start) }
        }
        // `min_total` rules need each cumulative record's end, value and source: read per participant.
        if engine.needsSamples {
            for (handle, id) in ids {
                try workspace.store.forEachRecord(handle, participantID: id) { record in
                    guard engine.countsTotals(of: record.kind), let value = record.value else { return }
                    engine.add(sampleOf: id, kind: record.kind, start: record.start, end: record.end, value: value, source: record.source)
                }
            }
        }
        return engine.report()
    }

    /// One rendered reminder per participant to remind, with the name and contact a coordinator
    /// mail-merges (decrypted from the roster for these participants only). The template sees
    /// `name`, `email` and `phone` besides the study fields and `rules`. Only the participants of
    /// `site` when given.
    public func reminders(asOf: Date, site: String? = nil) throws -> [ReminderMessage] {
        let pinned = try workspace.currentProtocol()
        let p = pinned.studyProtocol
        let report = try report(asOf: asOf, site: site)
        let template = try p.compliance.reminderTemplate.map { try Templates.pinned($0, workspace: workspace) }
            ?? "Hello {{{name}}},\n\nthis is a reminder from the {{title}} study team.\n{{#rules}}\n- {{description}}: {{days_met}} of {{days_expected}} days ({{rate}})\n{{/rules}}\n"
        var identities: [String: ParticipantIdentity] = [:]
        if !report.reminders.isEmpty {
            let codes = Set(report.reminders.map(\.code))
            for stored in try workspace.store.participants(withIdentities: true) where codes.contains(stored.participant.code) {
                identities[stored.participant.code] = stored.participant.identity
            }
        }
        return try report.reminders.map { reminder in
            let identity = identities[reminder.code]
            var context = Templates.studyContext(p)
            context["code"] = reminder.code
            context["name"] = identity?.name ?? ""
            context["email"] = identity?.email ?? ""
            context["phone"] = identity?.phone ?? ""
            context["rules"] = reminder.rules.map { item -> [String: Any] in
                let result = report.participants.first { $0.participantID == reminder.participantID }?.rules.first { $0.ruleID == item.ruleID }
                return [
                    "description": item.description, "rate": String(format: "%.0f%%", item.rate * 100), "days_met": result?.daysMet ?? 0,
                    "days_expected": result?.daysExpected ?? 0, "missed_last_day": result?.missedLastClosedDay ?? false,
                ]
            }
            return ReminderMessage(
                code: reminder.code, name: identity?.name ?? "", email: identity?.email, phone: identity?.phone, address: identity?.address,
                text: try Templates.render(template, context, name: "reminder"))
        }
    }
}
