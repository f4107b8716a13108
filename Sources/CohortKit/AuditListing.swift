public import CohortStore
public import Foundation
import CohortCore

/// `cohort audit show`: the audit events from an event number or from an instant, and their
/// rows for a table or CSV (the names and reasons people typed shown where not erased).
public struct AuditListing: Sendable {
    /// Where the listing starts.
    public enum Start: Sendable, Equatable {
        /// From this event number (1 = the whole trail).
        case event(Int64)
        /// From the first event at or after this instant.
        case instant(Date)
    }

    /// The workspace whose trail is listed.
    public let workspace: Workspace

    /// A listing of `workspace`'s trail.
    public init(workspace: Workspace) { self.workspace = workspace }

    /// The events from `start`, in chain order.
    public func events(from start: Start) throws -> [AuditEvent] {
        switch start {
        case .event(let seq):
            return try workspace.store.auditEvents(since: seq)
        case .instant(let instant):
            // Events are appended in time order, so the trail is filtered, not searched.
            return try workspace.store.auditEvents(since: 1).filter { event in
                guard let at = Timestamp.parse(event.at, defaultTimeZone: nil) else { return true }
                return at.date >= instant
            }
        }
    }

    /// Column names of ``cells(_:)``.
    public static let header = ["seq", "at", "actor", "action", "subject", "details", "hash"]

    /// One table or CSV row: the displayed actor and details (`key=value`, sorted), the hash's first 16 digits.
    public static func cells(_ event: AuditEvent) -> [String] {
        [
            String(event.seq), event.at, event.displayActor, event.action, event.subject ?? "",
            event.displayDetails.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "), String(event.hash.prefix(16)),
        ]
    }
}
