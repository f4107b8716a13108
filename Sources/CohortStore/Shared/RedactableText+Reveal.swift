import CohortCore

/// How a read shows what the audit chain and the withdrawal rows keep as redactable references,
/// written once for both stores: each store only looks the references up (SQLite one at a
/// time, PostgreSQL in one query), through `text(reference)` — the text, or nil when an erase
/// deleted it.
extension AuditEvent {
    /// Sets ``revealed``: `actor` and `details.<key>` → the text behind each redactable reference
    /// (``redactedText`` once erased); nil when the event holds none.
    package mutating func reveal(_ text: (String) throws -> String?) throws {
        var revealed: [String: String] = [:]
        if actor.hasPrefix(RedactableText.prefix) { revealed["actor"] = try text(actor) ?? AuditEvent.redactedText }
        for (key, value) in details where value.hasPrefix(RedactableText.prefix) {
            revealed["details." + key] = try text(value) ?? AuditEvent.redactedText
        }
        self.revealed = revealed.isEmpty ? nil : revealed
    }
}

extension StoredWithdrawal {
    /// The withdrawal of `row`, its actor and reason revealed (plain values as they are;
    /// ``AuditEvent/redactedText`` once erased).
    package init(_ row: WithdrawalRow, reveal text: (String) throws -> String?) throws {
        func reveal(_ value: String) throws -> String { RedactableText.digest(of: value) == nil ? value : try text(value) ?? AuditEvent.redactedText }
        self.init(
            id: row.id, mode: row.mode, at: Timestamp(epochMilliseconds: row.atMs), by: row.byKind, actor: try reveal(row.actor),
            reason: try row.reason.map(reveal), consentVersion: row.consentVersion, counts: row.counts)
    }
}
